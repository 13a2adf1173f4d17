//! Where workspace tasks find their repositories: lakeFS when an endpoint is configured, else
//! the embedded local store. The flags of `run` and `worker` (and of `perago workspace`).
//!
//! lakeFS settings use lakectl's names, so a machine set up for lakectl needs nothing more:
//! `LAKECTL_SERVER_ENDPOINT_URL`, `LAKECTL_CREDENTIALS_ACCESS_KEY_ID`,
//! `LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY`. They come from the worker's own configuration,
//! never from Conductor input, and the secret never appears in a log line or a message.

use perago_workspace::Store;
use perago_workspace::lakefs::{LakeFs, LakeFsSettings};
use perago_workspace::local::LocalStore;
use std::path::PathBuf;
use std::sync::Arc;

/// The variable naming the local store's directory.
pub const STORE_ENV: &str = "PERAGO_STORE";

/// The flags choosing the store.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct StoreArgs {
    /// The local store's directory, used when no lakeFS endpoint is configured
    /// (default: $XDG_DATA_HOME/perago/store, or ~/.local/share/perago/store) [env: PERAGO_STORE]
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// The lakeFS server, e.g. http://localhost:8000 [env: LAKECTL_SERVER_ENDPOINT_URL]
    #[arg(long, value_name = "URL")]
    pub lakefs_endpoint: Option<String>,
    /// The lakeFS access key id [env: LAKECTL_CREDENTIALS_ACCESS_KEY_ID]
    #[arg(long, value_name = "ID")]
    pub lakefs_access_key_id: Option<String>,
    /// The lakeFS secret access key; prefer the variable, which `ps` does not show
    /// [env: LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY]
    #[arg(long, value_name = "KEY")]
    pub lakefs_secret_access_key: Option<String>,
}

/// The store chosen, not yet opened (so that a run of a workspace-free task touches nothing).
#[derive(Debug, Clone)]
pub enum StoreChoice {
    /// lakeFS.
    LakeFs(LakeFsSettings),
    /// The local store in this directory.
    Local(PathBuf),
}

impl StoreArgs {
    /// Chooses the store: a lakeFS endpoint (flag or variable) wins; else the local store at
    /// `--store`, `PERAGO_STORE` or the default directory. `Err` names the missing or bad
    /// setting, never a secret.
    pub fn choose(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<StoreChoice, String> {
        let flag = |var: &str| match var {
            "LAKECTL_SERVER_ENDPOINT_URL" => self.lakefs_endpoint.clone(),
            "LAKECTL_CREDENTIALS_ACCESS_KEY_ID" => self.lakefs_access_key_id.clone(),
            "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY" => self.lakefs_secret_access_key.clone(),
            _ => None,
        };
        let settings = LakeFsSettings::from_lookup(|var| {
            flag(var).or_else(|| lookup(var).filter(|v| !v.trim().is_empty()))
        })
        .map_err(|e| e.to_string())?;
        if let Some(settings) = settings {
            return Ok(StoreChoice::LakeFs(settings));
        }
        let dir = self
            .store
            .clone()
            .or_else(|| {
                lookup(STORE_ENV)
                    .filter(|v| !v.trim().is_empty())
                    .map(PathBuf::from)
            })
            .unwrap_or_else(|| default_store_dir(&lookup));
        Ok(StoreChoice::Local(dir))
    }
}

impl StoreChoice {
    /// Opens the store.
    pub fn open(&self) -> Result<Arc<dyn Store>, String> {
        match self {
            StoreChoice::LakeFs(settings) => LakeFs::new(settings.clone())
                .map(|s| Arc::new(s) as Arc<dyn Store>)
                .map_err(|e| e.to_string()),
            StoreChoice::Local(dir) => LocalStore::open(dir)
                .map(|s| Arc::new(s) as Arc<dyn Store>)
                .map_err(|e| format!("the local store {}: {e}", dir.display())),
        }
    }
}

/// `$XDG_DATA_HOME/perago/store`, else `$HOME/.local/share/perago/store`, else
/// `.perago/store` in the working directory.
pub fn default_store_dir(lookup: &impl Fn(&str) -> Option<String>) -> PathBuf {
    let set = |var: &str| {
        lookup(var)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    if let Some(data) = set("XDG_DATA_HOME") {
        return data.join("perago").join("store");
    }
    if let Some(home) = set("HOME") {
        return home.join(".local/share/perago/store");
    }
    PathBuf::from(".perago/store")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_store_is_the_default() {
        let args = StoreArgs::default();
        let choice = args.choose(|var| (var == "HOME").then(|| "/home/ada".into()));
        let Ok(StoreChoice::Local(dir)) = choice else {
            panic!("{choice:?}")
        };
        assert_eq!(dir, PathBuf::from("/home/ada/.local/share/perago/store"));
        let choice = args.choose(|var| (var == STORE_ENV).then(|| "/srv/store".into()));
        let Ok(StoreChoice::Local(dir)) = choice else {
            panic!("{choice:?}")
        };
        assert_eq!(dir, PathBuf::from("/srv/store"));
        let flagged = StoreArgs {
            store: Some("/flag".into()),
            ..StoreArgs::default()
        };
        let choice = flagged.choose(|var| (var == STORE_ENV).then(|| "/env".into()));
        let Ok(StoreChoice::Local(dir)) = choice else {
            panic!("{choice:?}")
        };
        assert_eq!(dir, PathBuf::from("/flag"));
    }

    #[test]
    fn a_lakefs_endpoint_wins_and_its_secret_is_never_shown() {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let args = StoreArgs {
            lakefs_endpoint: Some("http://127.0.0.1:1".into()),
            lakefs_access_key_id: Some("AKIA".into()),
            lakefs_secret_access_key: Some(secret.into()),
            ..StoreArgs::default()
        };
        let choice = args.choose(|_| None).unwrap();
        assert!(matches!(choice, StoreChoice::LakeFs(_)));
        assert!(!format!("{choice:?}").contains(secret));
        let missing = StoreArgs {
            lakefs_secret_access_key: None,
            ..args
        };
        let err = missing.choose(|_| None).unwrap_err();
        assert!(
            err.contains("LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY"),
            "{err}"
        );
    }
}
