//! A host's addresses, looked up once in a while instead of once per request, for perago's
//! HTTP clients (the Conductor client, `perago-conductor`, and the lakeFS client,
//! `perago-workspace`).
//!
//! ureq resolves a request's host before it looks in its pool of idle connections, so every
//! request, even one that reuses a connection, resolves. Without a resolve timeout, ureq's
//! default resolver looks up on the calling thread, unbounded: a `getaddrinfo` per request
//! for a host name, a DNS query each where nothing caches them, and a poll that waits as long
//! as DNS does. With a resolve timeout it runs each lookup on a thread of its own (an IP
//! address included), to stop waiting when the timeout passes: a lakeFS checkout of 10,000
//! objects started 10,000 threads, and each download waited for its thread to be scheduled;
//! on two busy cores the client used one. [`CachedResolver`] keeps each host's addresses for
//! [`KEEP`], the time Java keeps a successful lookup by default; a failed lookup is not kept.
//!
//! ```
//! use std::time::Duration;
//!
//! let config = ureq::Agent::config_builder()
//!     .timeout_resolve(Some(Duration::from_secs(5)))
//!     .build();
//! let agent = perago_resolver::agent(config);
//! # drop(agent);
//! ```

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// An agent with `config`, ureq's default connector and a [`CachedResolver`]: how perago's
/// clients build theirs.
pub fn agent(config: Config) -> ureq::Agent {
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::new(),
        CachedResolver::new(),
    )
}

/// How long a host's addresses are used before they are looked up again.
pub const KEEP: Duration = Duration::from_secs(30);

/// A [`Resolver`] that asks `inner` (ureq's default, bounded by the agent's resolve timeout)
/// once per host and [`KEEP`].
pub struct CachedResolver<R = DefaultResolver> {
    inner: R,
    keep: Duration,
    /// The last lookup: scheme and authority, when it was made, its addresses. One entry,
    /// since each of perago's clients talks to one server.
    last: Mutex<Option<(String, String, Instant, ResolvedSocketAddrs)>>,
}

impl CachedResolver {
    /// ureq's default resolver, its answers kept [`KEEP`].
    pub fn new() -> Self {
        Self::with(DefaultResolver::default(), KEEP)
    }
}

impl<R> CachedResolver<R> {
    fn with(inner: R, keep: Duration) -> Self {
        CachedResolver {
            inner,
            keep,
            last: Mutex::new(None),
        }
    }
}

impl Default for CachedResolver {
    fn default() -> Self {
        Self::new()
    }
}

impl<R> fmt::Debug for CachedResolver<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedResolver")
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl<R: Resolver> Resolver for CachedResolver<R> {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        // The port is part of the authority, and the scheme decides the default port.
        let scheme = uri.scheme_str().unwrap_or_default();
        let authority = uri.authority().map_or("", |a| a.as_str());
        {
            let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((s, a, at, addrs)) = last.as_ref()
                && (s.as_str(), a.as_str()) == (scheme, authority)
                && at.elapsed() < self.keep
            {
                return Ok(addrs.clone());
            }
        }
        // Looked up outside the lock: a slow lookup holds up no request to another host,
        // and two threads that miss together both look up (the later answer is kept).
        let addrs = self.inner.resolve(uri, config, timeout)?;
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some((
            scheme.to_owned(),
            authority.to_owned(),
            Instant::now(),
            addrs.clone(),
        ));
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers a fixed address per lookup and counts the lookups (fails for `fail.invalid`).
    #[derive(Debug, Default)]
    struct Counting(AtomicUsize);

    impl Resolver for Counting {
        fn resolve(
            &self,
            uri: &Uri,
            _: &Config,
            _: NextTimeout,
        ) -> Result<ResolvedSocketAddrs, ureq::Error> {
            let n = self.0.fetch_add(1, Ordering::Relaxed);
            if uri.host() == Some("fail.invalid") {
                return Err(ureq::Error::HostNotFound);
            }
            let mut addrs = self.empty();
            addrs.push(SocketAddr::from(([127, 0, 0, 1], 8000 + n as u16)));
            Ok(addrs)
        }
    }

    fn lookup<R: Resolver>(resolver: &CachedResolver<R>, uri: &str) -> Option<u16> {
        let config = Config::default();
        let timeout = NextTimeout::default();
        let uri: Uri = uri.parse().unwrap();
        resolver
            .resolve(&uri, &config, timeout)
            .ok()
            .map(|a| a[0].port())
    }

    #[test]
    fn a_host_is_looked_up_once_until_its_addresses_are_old() {
        let resolver = CachedResolver::with(Counting::default(), Duration::from_secs(3600));
        for _ in 0..100 {
            assert_eq!(lookup(&resolver, "http://lakefs:8000/api/v1/x"), Some(8000));
        }
        assert_eq!(resolver.inner.0.load(Ordering::Relaxed), 1);
        // Another port or scheme is another lookup, and replaces the one kept.
        assert_eq!(lookup(&resolver, "http://lakefs:9000/api/v1/x"), Some(8001));
        assert_eq!(lookup(&resolver, "https://lakefs:9000/"), Some(8002));
        assert_eq!(lookup(&resolver, "https://lakefs:9000/"), Some(8002));
        assert_eq!(resolver.inner.0.load(Ordering::Relaxed), 3);
        // A failed lookup is not kept.
        assert_eq!(lookup(&resolver, "http://fail.invalid/"), None);
        assert_eq!(lookup(&resolver, "http://fail.invalid/"), None);
        assert_eq!(resolver.inner.0.load(Ordering::Relaxed), 5);
        assert_eq!(lookup(&resolver, "https://lakefs:9000/"), Some(8002));

        // Addresses older than `keep` are looked up again.
        let resolver = CachedResolver::with(Counting::default(), Duration::ZERO);
        assert_eq!(lookup(&resolver, "http://lakefs:8000/"), Some(8000));
        assert_eq!(lookup(&resolver, "http://lakefs:8000/"), Some(8001));
    }
}
