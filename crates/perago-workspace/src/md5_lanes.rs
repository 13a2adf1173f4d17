//! MD5 digests of many files, sixteen computed side by side.
//!
//! One MD5 is a chain of dependent steps, so a core runs it at one step after another (about
//! 700 MB/s here) however wide its vector units are. Sixteen independent digests, one per lane
//! of an array, make every step sixteen independent operations that the compiler turns into
//! vector instructions: SSE2 (which every x86-64 has) in four registers, AVX2 in two, or
//! AVX-512 in one, with its rotate and three-input logic instructions. [`pulp`] picks the
//! widest the CPU has at run time (safe code compiled for each; the workspace forbids
//! `unsafe`): on an AVX-512 core about 3× the SSE2 code's throughput, which is itself about
//! 3× one digest at a time. Each step needs word `w` of every lane's block side by side; with
//! AVX-512 the blocks are turned that way by shuffles (`transpose_v4`, 8 instead of 6 GB/s
//! from the cache), otherwise word by word. A checkout verifies thousands of objects and a
//! publication hashes thousands of files, so the lakeFS client hashes them here, from the
//! files once written (or before they are sent), instead of one stream at a time while it
//! transfers.
//!
//! Each lane reads its file through its own 64 KiB buffer and takes the next file as soon as
//! it is done, so memory stays [`LANES`] buffers per thread whatever the files' sizes. Bytes
//! already in memory ([`Input::Bytes`]) are hashed where they are.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};

/// Digests computed side by side.
pub const LANES: usize = 16;

/// Each lane's read buffer.
const BUFFER: usize = 64 * 1024;

/// One 32-bit word of every lane.
type Word = [u32; LANES];

/// MD5's initial state (RFC 1321 §3.3).
const INIT: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The sine table, `floor(abs(sin(i + 1)) × 2³²)` (RFC 1321 §3.4).
const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

/// The shifts of each round's four steps.
const S: [[u32; 4]; 4] = [
    [7, 12, 17, 22],
    [5, 9, 14, 20],
    [4, 11, 16, 23],
    [6, 10, 15, 21],
];

/// One step of every lane: `a = b + ((a + f + m + k) <<< s)`.
#[inline(always)]
fn step(a: &mut Word, b: &Word, f: &Word, m: &Word, k: u32, s: u32) {
    for l in 0..LANES {
        a[l] = b[l].wrapping_add(
            a[l].wrapping_add(f[l])
                .wrapping_add(m[l])
                .wrapping_add(k)
                .rotate_left(s),
        );
    }
}

/// MD5's compression of one 64-byte block per lane (`block[w][l]`: word `w` of lane `l`'s
/// block), RFC 1321 §3.4. Inlined into [`Blocks::hash`], so that it is compiled for each
/// instruction set pulp dispatches to.
#[inline(always)]
fn compress(state: &mut [Word; 4], block: &[Word; 16]) {
    let [mut a, mut b, mut c, mut d] = *state;
    let mut f = [0u32; LANES];
    for i in 0..64 {
        let round = i / 16;
        let word = match round {
            0 => i,
            1 => (5 * i + 1) % 16,
            2 => (3 * i + 5) % 16,
            _ => (7 * i) % 16,
        };
        for l in 0..LANES {
            f[l] = match round {
                0 => (b[l] & c[l]) | (!b[l] & d[l]),
                1 => (d[l] & b[l]) | (!d[l] & c[l]),
                2 => b[l] ^ c[l] ^ d[l],
                _ => c[l] ^ (b[l] | !d[l]),
            };
        }
        step(&mut a, &b, &f, &block[word], K[i], S[round][i % 4]);
        (a, b, c, d) = (d, a, b, c);
    }
    for (s, v) in state.iter_mut().zip([a, b, c, d]) {
        for l in 0..LANES {
            s[l] = s[l].wrapping_add(v[l]);
        }
    }
}

/// The next `count` blocks of every busy lane, hashed into `state` with the CPU's widest
/// instruction set ([`Blocks::run`]).
struct Blocks<'a> {
    lanes: &'a [Option<Stream<'a>>; LANES],
    count: usize,
    state: &'a mut [Word; 4],
}

impl<'a> Blocks<'a> {
    /// Hashes the blocks with the instruction set of `arch`.
    fn run(self, arch: pulp::Arch) {
        match arch {
            #[cfg(target_arch = "x86_64")]
            pulp::Arch::V4(simd) => pulp::Simd::vectorize(simd, BlocksV4 { simd, blocks: self }),
            _ => arch.dispatch(self),
        }
    }

    /// Hashes the blocks, block `b` of every lane laid out word by word by `layout`.
    #[inline(always)]
    fn hash(self, layout: impl Fn(&[Option<Stream<'a>>; LANES], usize, &mut [Word; 16])) {
        let mut block = [[0u32; LANES]; 16];
        for b in 0..self.count {
            layout(self.lanes, b, &mut block);
            compress(self.state, &block);
        }
    }
}

/// Lays out block `b` of every busy lane word by word (`block[w][l]`), one word at a time.
/// Idle lanes hash zeros, unread.
#[inline(always)]
fn gather(lanes: &[Option<Stream<'_>>; LANES], b: usize, block: &mut [Word; 16]) {
    for (l, lane) in lanes.iter().enumerate() {
        if let Some(stream) = lane {
            let bytes = stream.block(b);
            for (word, chunk) in block.iter_mut().zip(bytes.chunks_exact(4)) {
                word[l] = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            }
        }
    }
}

/// The blocks with SSE2 or AVX2, compiled for each by [`pulp`].
impl pulp::WithSimd for Blocks<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        self.hash(gather);
    }
}

/// The blocks with AVX-512, laid out by [`transpose_v4`].
#[cfg(target_arch = "x86_64")]
struct BlocksV4<'a> {
    simd: pulp::x86::V4,
    blocks: Blocks<'a>,
}

#[cfg(target_arch = "x86_64")]
impl pulp::WithSimd for BlocksV4<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let simd = self.simd;
        self.blocks
            .hash(|lanes, b, block| transpose_v4(simd, lanes, b, block));
    }
}

/// [`gather`] with AVX-512: each lane's block loaded as one vector, and the sixteen
/// transposed by 64 shuffles where [`gather`] moves 512 words one by one, which was 40% of
/// the hashing. Idle lanes hash zeros.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn transpose_v4(
    simd: pulp::x86::V4,
    lanes: &[Option<Stream<'_>>; LANES],
    b: usize,
    block: &mut [Word; 16],
) {
    use std::arch::x86_64::__m512i;
    let f = simd.avx512f;
    let zeros = [0u8; 64];
    let rows: [__m512i; LANES] = std::array::from_fn(|l| {
        bytemuck::cast(*lanes[l].as_ref().map_or(&zeros, |stream| stream.block(b)))
    });
    // Rows interleaved by words, then by pairs of words: the 128-bit part k of `by_four[4g + j]`
    // holds word 4k + j of rows 4g to 4g + 3.
    let mut by_four = rows;
    for g in 0..4 {
        let [r0, r1, r2, r3] = [
            rows[4 * g],
            rows[4 * g + 1],
            rows[4 * g + 2],
            rows[4 * g + 3],
        ];
        let (low01, high01) = (
            f._mm512_unpacklo_epi32(r0, r1),
            f._mm512_unpackhi_epi32(r0, r1),
        );
        let (low23, high23) = (
            f._mm512_unpacklo_epi32(r2, r3),
            f._mm512_unpackhi_epi32(r2, r3),
        );
        by_four[4 * g] = f._mm512_unpacklo_epi64(low01, low23);
        by_four[4 * g + 1] = f._mm512_unpackhi_epi64(low01, low23);
        by_four[4 * g + 2] = f._mm512_unpacklo_epi64(high01, high23);
        by_four[4 * g + 3] = f._mm512_unpackhi_epi64(high01, high23);
    }
    // Then the 128-bit parts: word 4k + j of every row is part k of by_four[j], [4 + j],
    // [8 + j] and [12 + j], in that order. (`_mm512_shuffle_i32x4::<M>(a, b)` takes parts
    // M[1:0] and M[3:2] of a, then M[5:4] and M[7:6] of b.)
    let mut words = rows;
    for j in 0..4 {
        let [q0, q1, q2, q3] = [by_four[j], by_four[4 + j], by_four[8 + j], by_four[12 + j]];
        let low01 = f._mm512_shuffle_i32x4::<0x44>(q0, q1);
        let high01 = f._mm512_shuffle_i32x4::<0xee>(q0, q1);
        let low23 = f._mm512_shuffle_i32x4::<0x44>(q2, q3);
        let high23 = f._mm512_shuffle_i32x4::<0xee>(q2, q3);
        words[j] = f._mm512_shuffle_i32x4::<0x88>(low01, low23);
        words[4 + j] = f._mm512_shuffle_i32x4::<0xdd>(low01, low23);
        words[8 + j] = f._mm512_shuffle_i32x4::<0x88>(high01, high23);
        words[12 + j] = f._mm512_shuffle_i32x4::<0xdd>(high01, high23);
    }
    *block = bytemuck::cast(words);
}

/// What a lane hashes.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A file, read through the lane's buffer.
    File(&'a Path),
    /// Bytes already in memory, hashed where they are.
    Bytes(&'a [u8]),
}

/// Where a lane's unhashed bytes are.
enum Source<'a> {
    /// A file being read through its buffer.
    File { file: File, buffer: Vec<u8> },
    /// The whole input, in memory.
    Bytes(&'a [u8]),
    /// The whole input, in memory, given to the lane.
    Owned(Vec<u8>),
}

/// An input in a lane.
struct Stream<'a> {
    /// Its place in the caller's list.
    index: usize,
    source: Source<'a>,
    /// The source's bytes not hashed yet: `start..end` of its buffer or bytes.
    start: usize,
    end: usize,
    /// Bytes read so far (all of them, for bytes in memory).
    length: u64,
    /// The padded last block or two once the input has ended (RFC 1321, sections 3.1 and 3.2):
    /// the bytes, the blocks already hashed and the blocks in all.
    tail: Option<([u8; 128], usize, usize)>,
}

impl<'a> Stream<'a> {
    /// A stream of `input`, or of its content when `content` has it, reading a file through
    /// `buffer` (returned by [`into_buffer`](Self::into_buffer)).
    fn open(
        index: usize,
        input: Input<'a>,
        content: Option<Vec<u8>>,
        buffer: impl FnOnce() -> Vec<u8>,
    ) -> io::Result<Self> {
        let (source, end) = match (content, input) {
            (Some(bytes), _) => {
                let end = bytes.len();
                (Source::Owned(bytes), end)
            }
            (None, Input::File(path)) => (
                Source::File {
                    file: File::open(path)?,
                    buffer: buffer(),
                },
                0,
            ),
            (None, Input::Bytes(bytes)) => (Source::Bytes(bytes), bytes.len()),
        };
        Ok(Stream {
            index,
            source,
            start: 0,
            end,
            length: end as u64,
            tail: None,
        })
    }

    /// The read buffer, for the next file.
    fn into_buffer(self) -> Option<Vec<u8>> {
        match self.source {
            Source::File { buffer, .. } => Some(buffer),
            Source::Bytes(_) | Source::Owned(_) => None,
        }
    }

    /// The buffer or bytes that `start..end` index.
    #[inline(always)]
    fn held(&self) -> &[u8] {
        match &self.source {
            Source::File { buffer, .. } | Source::Owned(buffer) => buffer,
            Source::Bytes(bytes) => bytes,
        }
    }

    /// Whole blocks ready to hash (at least one unless the input has ended and its tail is
    /// hashed), reading more when fewer than one is buffered.
    fn ready(&mut self) -> io::Result<usize> {
        if let Some((_, hashed, blocks)) = self.tail {
            return Ok(blocks - hashed);
        }
        if self.end - self.start < 64 {
            if let Source::File { file, buffer } = &mut self.source {
                buffer.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
                while self.end < 64 {
                    let n = match file.read(&mut buffer[self.end..]) {
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(e),
                    };
                    if n == 0 {
                        break;
                    }
                    self.end += n;
                    self.length += n as u64;
                }
            }
            if self.end - self.start < 64 {
                let (tail, blocks) = self.pad();
                self.tail = Some((tail, 0, blocks));
                return Ok(blocks);
            }
        }
        Ok((self.end - self.start) / 64)
    }

    /// The rest of the input, padded with `0x80`, zeros and the bit length: one block, or two
    /// when fewer than 9 bytes are left in the first.
    fn pad(&self) -> ([u8; 128], usize) {
        let rest = &self.held()[self.start..self.end];
        let mut tail = [0u8; 128];
        tail[..rest.len()].copy_from_slice(rest);
        tail[rest.len()] = 0x80;
        let blocks = if rest.len() < 56 { 1 } else { 2 };
        let bits = self.length.wrapping_mul(8).to_le_bytes();
        tail[blocks * 64 - 8..blocks * 64].copy_from_slice(&bits);
        (tail, blocks)
    }

    /// Block `b` of those [`ready`](Self::ready) counted.
    #[inline(always)]
    fn block(&self, b: usize) -> &[u8; 64] {
        let bytes = match &self.tail {
            Some((tail, hashed, _)) => &tail[(hashed + b) * 64..(hashed + b) * 64 + 64],
            None => &self.held()[self.start + b * 64..self.start + b * 64 + 64],
        };
        bytes.try_into().expect("64 bytes")
    }

    /// Marks `blocks` blocks hashed; true when that was the last of the input.
    fn consume(&mut self, blocks: usize) -> bool {
        match &mut self.tail {
            Some((_, hashed, all)) => {
                *hashed += blocks;
                hashed == all
            }
            None => {
                self.start += blocks * 64;
                false
            }
        }
    }
}

/// The lowercase hex MD5 of each of `files`, in order, computed by up to `threads` threads of
/// [`LANES`] digests each. The first file that cannot be read stops the work: its index and
/// the error.
pub fn md5_files(files: &[PathBuf], threads: usize) -> Result<Vec<String>, (usize, io::Error)> {
    md5_all(&as_inputs(files), threads)
}

/// [`md5_files`] of files and bytes in memory: a publication hashes small files from the
/// bytes it then sends, so that each is read once.
pub fn md5_all(inputs: &[Input<'_>], threads: usize) -> Result<Vec<String>, (usize, io::Error)> {
    md5_all_with(inputs, threads, pulp::Arch::new())
}

/// [`md5_all`] with the instruction set of `arch`.
fn md5_all_with(
    inputs: &[Input<'_>],
    threads: usize,
    arch: pulp::Arch,
) -> Result<Vec<String>, (usize, io::Error)> {
    let next = AtomicUsize::new(0);
    let take = || {
        let i = next.fetch_add(1, Ordering::Relaxed);
        (i < inputs.len()).then_some((i, None))
    };
    let threads = threads.min(inputs.len().div_ceil(LANES));
    let digests = hash_all(inputs, threads, take, arch)?;
    Ok(digests.into_iter().map(Option::unwrap_or_default).collect())
}

fn as_inputs(files: &[PathBuf]) -> Vec<Input<'_>> {
    files.iter().map(|file| Input::File(file)).collect()
}

/// [`md5_files`] for files that become ready one by one (downloads, say): the index of each
/// file to hash arrives on `ready` once the file is complete, with the file's content when
/// the sender has it in memory (hashed instead of the file), and the work ends when every
/// sender is gone. The digest of each file received, `None` for the others.
///
/// A thread waits for files until its lanes are busy, and hashes with idle lanes only once no
/// more will come: a step of all the lanes costs about what a step of two or three digests one
/// at a time costs, so hashing each file as soon as it arrives, with the others idle, would
/// cost more than hashing it alone.
pub fn md5_as_ready(
    files: &[PathBuf],
    ready: mpsc::Receiver<(usize, Option<Vec<u8>>)>,
    threads: usize,
) -> Result<Vec<Option<String>>, (usize, io::Error)> {
    let ready = Mutex::new(ready);
    let take = || ready.lock().unwrap_or_else(|p| p.into_inner()).recv().ok();
    hash_all(&as_inputs(files), threads, take, pulp::Arch::new())
}

/// Runs [`hash_lanes`] on `threads` threads, which take inputs with `take`, with the
/// instruction set of `arch`.
fn hash_all(
    inputs: &[Input<'_>],
    threads: usize,
    take: impl Fn() -> Option<(usize, Option<Vec<u8>>)> + Sync,
    arch: pulp::Arch,
) -> Result<Vec<Option<String>>, (usize, io::Error)> {
    let failed = AtomicBool::new(false);
    let digests: Mutex<Vec<Option<String>>> = Mutex::new(vec![None; inputs.len()]);
    if threads <= 1 {
        // On the caller's thread.
        let done = |i: usize, digest: String| {
            digests.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(digest);
        };
        hash_lanes(inputs, take, done, arch)?;
        return Ok(digests.into_inner().unwrap_or_else(|p| p.into_inner()));
    }
    let first_error: Mutex<Option<(usize, io::Error)>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let take = || {
                    if failed.load(Ordering::Relaxed) {
                        return None;
                    }
                    take()
                };
                let done = |i: usize, digest: String| {
                    digests.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(digest);
                };
                if let Err(e) = hash_lanes(inputs, take, done, arch) {
                    failed.store(true, Ordering::Relaxed);
                    first_error
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .get_or_insert(e);
                }
            });
        }
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(digests.into_inner().unwrap_or_else(|p| p.into_inner()))
}

thread_local! {
    /// Read buffers kept from one call to the next on a thread ([`LANES`] at most).
    static SPARE: std::cell::Cell<Vec<Vec<u8>>> = const { std::cell::Cell::new(Vec::new()) };
}

/// One thread's work: inputs taken with `take` into free lanes (`None`: no more will come;
/// an input's index, and its content when the taker has it), each digest given to `done`,
/// the blocks hashed with `arch`'s instruction set.
fn hash_lanes(
    inputs: &[Input<'_>],
    take: impl Fn() -> Option<(usize, Option<Vec<u8>>)>,
    done: impl Fn(usize, String),
    arch: pulp::Arch,
) -> Result<(), (usize, io::Error)> {
    let mut lanes: [Option<Stream>; LANES] = Default::default();
    // The buffers of this thread's last call: a publication hashes each batch of files in
    // a call of its own, and zeroing fresh buffers for every batch cost as much as a tenth
    // of the hashing.
    let mut spare: Vec<Vec<u8>> = SPARE.take();
    let mut state = [[0u32; LANES]; 4];
    loop {
        for l in 0..LANES {
            while lanes[l].is_none() {
                let Some((index, content)) = take() else {
                    break;
                };
                let buffer = || spare.pop().unwrap_or_else(|| vec![0; BUFFER]);
                let mut stream =
                    Stream::open(index, inputs[index], content, buffer).map_err(|e| (index, e))?;
                stream.ready().map_err(|e| (index, e))?;
                for (s, init) in state.iter_mut().zip(INIT) {
                    s[l] = init;
                }
                lanes[l] = Some(stream);
            }
        }
        // As many blocks as every busy lane has ready.
        let mut count = usize::MAX;
        for stream in lanes.iter_mut().flatten() {
            count = count.min(stream.ready().map_err(|e| (stream.index, e))?);
        }
        if count == usize::MAX {
            SPARE.set(spare);
            return Ok(());
        }
        Blocks {
            lanes: &lanes,
            count,
            state: &mut state,
        }
        .run(arch);
        for (l, lane) in lanes.iter_mut().enumerate() {
            let finished = lane.as_mut().is_some_and(|s| s.consume(count));
            if finished && let Some(stream) = lane.take() {
                let mut hex = String::with_capacity(32);
                for s in &state {
                    for byte in s[l].to_le_bytes() {
                        hex.push(char::from(b"0123456789abcdef"[usize::from(byte >> 4)]));
                        hex.push(char::from(b"0123456789abcdef"[usize::from(byte & 0xf)]));
                    }
                }
                done(stream.index, hex);
                spare.extend(stream.into_buffer());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::Digest;

    fn reference(data: &[u8]) -> String {
        md5::Md5::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Every instruction set pulp can dispatch to on this CPU.
    fn instruction_sets() -> Vec<pulp::Arch> {
        let mut sets = vec![pulp::Arch::Scalar];
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            sets.extend(pulp::x86::V3::try_new().map(pulp::Arch::V3));
            sets.extend(pulp::x86::V4::try_new().map(pulp::Arch::V4));
        }
        sets
    }

    #[test]
    fn digests_equal_one_at_a_time_md5_for_every_length_around_the_block_edges() {
        let dir = tempfile::tempdir().unwrap();
        // Every length from 0 to 200 (both padding cases, one and two tail blocks), lengths
        // around the read buffer, and files of very different lengths in one batch, so lanes
        // end and refill at different times.
        let mut lengths: Vec<usize> = (0..=200).collect();
        lengths.extend([BUFFER - 1, BUFFER, BUFFER + 1, 3 * BUFFER + 55, 300_001]);
        let mut seed = 0x9e37_79b9_u32;
        let files: Vec<(PathBuf, Vec<u8>)> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let data: Vec<u8> = (0..n)
                    .map(|_| {
                        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                        (seed >> 24) as u8
                    })
                    .collect();
                let path = dir.path().join(format!("f{i}"));
                std::fs::write(&path, &data).unwrap();
                (path, data)
            })
            .collect();
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        for threads in [1, 3] {
            let digests = md5_files(&paths, threads).unwrap();
            for ((path, data), digest) in files.iter().zip(&digests) {
                assert_eq!(
                    digest,
                    &reference(data),
                    "{} ({} bytes)",
                    path.display(),
                    data.len()
                );
            }
        }
        // The same with each instruction set this CPU has, not only the widest, and with
        // every other input in memory, so that files and bytes share the lanes.
        let mixed: Vec<Input> = files
            .iter()
            .enumerate()
            .map(|(i, (path, data))| {
                if i % 2 == 0 {
                    Input::File(path)
                } else {
                    Input::Bytes(data)
                }
            })
            .collect();
        for arch in instruction_sets() {
            let digests = md5_all_with(&mixed, 1, arch).unwrap();
            for ((path, data), digest) in files.iter().zip(&digests) {
                assert_eq!(digest, &reference(data), "{arch:?}: {}", path.display());
            }
        }
        let in_memory: Vec<Input> = files.iter().map(|(_, data)| Input::Bytes(data)).collect();
        let expected: Vec<String> = files.iter().map(|(_, data)| reference(data)).collect();
        assert_eq!(md5_all(&in_memory, 3).unwrap(), expected);
        assert_eq!(
            md5_files(&paths[..1], 4).unwrap(),
            ["d41d8cd98f00b204e9800998ecf8427e"]
        );
        assert!(md5_files(&[], 4).unwrap().is_empty());
    }

    #[test]
    fn files_hashed_as_they_become_ready_get_their_digests_and_the_rest_none() {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<(PathBuf, Vec<u8>)> = (0..30u8)
            .map(|k| {
                let data = vec![k; 5000 * usize::from(k)];
                let path = dir.path().join(format!("f{k}"));
                std::fs::write(&path, &data).unwrap();
                (path, data)
            })
            .collect();
        let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
        let (send, ready) = mpsc::channel();
        let digests = std::thread::scope(|scope| {
            let hashing = scope.spawn(|| md5_as_ready(&paths, ready, 2));
            // Sent in a scattered order, a few at a time, not all of them, and every third
            // with its content (a file of other content: the bytes given are hashed).
            for k in (0..30).rev().filter(|k| k % 7 != 3) {
                let content = (k % 3 == 0).then(|| files[k].1.clone());
                if content.is_some() {
                    std::fs::write(&files[k].0, b"not what was sent").unwrap();
                }
                send.send((k, content)).unwrap();
                if k % 5 == 0 {
                    std::thread::yield_now();
                }
            }
            drop(send);
            hashing.join().unwrap().unwrap()
        });
        for (k, ((_, data), digest)) in files.iter().zip(&digests).enumerate() {
            if k % 7 == 3 {
                assert_eq!(digest, &None, "f{k}");
            } else {
                assert_eq!(digest.as_deref(), Some(reference(data).as_str()), "f{k}");
            }
        }
    }

    #[test]
    fn a_file_that_cannot_be_read_is_named_by_its_index() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, b"x").unwrap();
        let missing = dir.path().join("missing");
        let (index, error) = md5_files(&[good, missing], 2).unwrap_err();
        assert_eq!(index, 1);
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
