//! The Sequencer chapter's term-by-term derivation (manual L1337-L1627): from a buffer
//! mapping and a stream (Time, Packet) to nested-loop entries `[size : stride, ...] : packet`.

use crate::mapping::layout::{Dim, Factor};
use crate::mapping::{Axis, Layout};
use crate::model::Dtype;
use crate::target::Target;
use std::fmt;

/// One loop level: `size` iterations, `stride` elements apart (0 = broadcast).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub size: u64,
    pub stride: u64,
}

/// Which way the sequencer moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Buffer → stream (Fetch Engine, DMA read).
    Read,
    /// Stream → buffer (Commit Engine, DMA write): the outermost packet factor may be
    /// truncated to what the buffer holds (L2199-L2203).
    Write,
}

/// A derived configuration (L1337-L1350).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// The entries after merging, outermost first.
    pub entries: Vec<Entry>,
    /// The entries term by term, before merging (equal to `entries` when no merge was needed).
    pub initial: Vec<Entry>,
    /// How many of the innermost `entries` belong to the packet.
    pub packet_entries: usize,
    /// How many of the innermost `initial` entries belong to the packet.
    pub initial_packet_entries: usize,
    /// Elements per packet. A read's packet grows when a temporal entry merges into it (L1619);
    /// a write's stays what each time step writes (a commit keeps part of one 32-byte flit,
    /// L2191-L2194): the merged entry then runs several packets one after the other.
    pub packet_size: u64,
}

/// Why no configuration exists (L1639-L1683), or why visa-lint cannot derive one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeriveError {
    /// The stream iterates indices the buffer does not hold (L1639): `needed` is the missing
    /// factor (`N / 512`), `have` what the buffer holds of that axis (`N % 512`).
    Insufficient {
        axis: String,
        needed: String,
        have: String,
        /// True when the missing factor is in the buffer and the stream lacks it (writes).
        reverse: bool,
        /// `"Time"` or `"Packet"`: the stream mapping that needs it (empty when `reverse`).
        slot: &'static str,
    },
    /// No common factorization (L1660): `axis` is split by `buf_split` in the buffer and by
    /// `stream_split` in the stream, and one does not divide the other.
    Incompatible {
        axis: String,
        buf_split: u64,
        stream_split: u64,
    },
    /// Irregular mappings (opaque digits, skewed axes) or overflow: not derived.
    Unsupported(String),
}

impl fmt::Display for Config {
    /// The manual's notation: `[8 : 32, 8 : 256, 16 : 1] : 16`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (k, e) in self.entries.iter().enumerate() {
            if k > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} : {}", e.size, e.stride)?;
        }
        write!(f, "] : {}", self.packet_size)
    }
}

/// A buffer digit: a factor and its position stride in elements.
struct BufDigit<'a> {
    f: &'a Factor,
    stride: u64,
}

fn factor_text(axis: &Axis, coef: u64, count: u64) -> String {
    let n = &axis.name;
    let top = coef.saturating_mul(count);
    match (coef == 1, top >= axis.size) {
        (true, true) => n.to_string(),
        (true, false) => format!("{n} % {count}"),
        (false, true) => format!("{n} / {coef}"),
        (false, false) => format!("{n} / {coef} % {count}"),
    }
}

/// Derives the configuration for moving `buf` to/from the stream `time`, `packet` (digits
/// outermost first; pass `Layout::dims`, or per-term digits to keep terms apart as written).
/// Entries are merged (`s1 == n2 * s2`) only when more than `max_entries` result (L1568).
pub fn configure(
    buf: &Layout,
    time: &[Dim],
    packet: &[Dim],
    dir: Direction,
    max_entries: usize,
) -> Result<Config, DeriveError> {
    let digits = buffer_digits(buf)?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut packet_entries = 0usize;
    let n_time = time.len();
    for (k, d) in time.iter().chain(packet.iter()).enumerate() {
        let is_packet = k >= n_time;
        // A write truncates what is past the buffer from the outermost packet digit.
        let truncate = dir == Direction::Write && is_packet && k == n_time;
        let parts = match d {
            // A read of a padded contiguous sub-mapping (`m![[A, B, C] # 32]` over the
            // buffer `m![A, B, C]`, L1830-L1835) overfetches: one contiguous entry.
            Dim::Opaque(o) => vec![
                padded_run(buf, o, dir, max_entries)
                    .ok_or_else(|| DeriveError::Unsupported("irregular stream mapping".into()))?,
            ],
            Dim::Factor(f) => factor_entries(&digits, f, dir, truncate, is_packet)?,
        };
        // Innermost first: pushed outermost first.
        for p in parts.into_iter().rev() {
            entries.push(p);
            if is_packet {
                packet_entries += 1;
            }
        }
    }
    if dir == Direction::Write {
        check_written(&digits, time, packet)?;
    }
    let initial = entries.clone();
    let initial_packet_entries = packet_entries;
    if entries.len() > max_entries {
        (entries, packet_entries) = merged(&entries, packet_entries);
    }
    // A write's packet is what one time step writes (a commit's input is one flit, L2191):
    // merging the loop around it into its entry (L1568) does not make the flit bigger.
    let packet_of = |es: &[Entry], n: usize| -> u64 {
        es[es.len() - n..]
            .iter()
            .fold(1u64, |acc, e| acc.saturating_mul(e.size))
    };
    let packet_size = match dir {
        Direction::Read => packet_of(&entries, packet_entries),
        Direction::Write => packet_of(&initial, initial_packet_entries),
    };
    Ok(Config {
        entries,
        initial,
        packet_entries,
        initial_packet_entries,
        packet_size,
    })
}

/// The buffer's digits, innermost first, each with its stride in elements.
fn buffer_digits(buf: &Layout) -> Result<Vec<BufDigit<'_>>, DeriveError> {
    let mut digits: Vec<BufDigit<'_>> = Vec::new();
    let mut stride: u64 = 1;
    for d in buf.dims.iter().rev() {
        match d {
            Dim::Factor(f) => {
                if f.axis.as_ref().is_some_and(|a| a.skew.is_some()) {
                    return Err(DeriveError::Unsupported("skewed axis in the buffer".into()));
                }
                digits.push(BufDigit { f, stride });
            }
            Dim::Opaque(_) => {
                return Err(DeriveError::Unsupported("irregular buffer mapping".into()));
            }
        }
        stride = stride
            .checked_mul(d.extent())
            .ok_or_else(|| DeriveError::Unsupported("overflow".into()))?;
    }
    Ok(digits)
}

/// The entries of one stream digit `f`, innermost first: pure padding re-reads (stride 0)
/// unless a write truncates it away, an axis the buffer lacks is broadcast (stride 0), and an
/// axis the buffer holds is read from the digits that hold it.
fn factor_entries(
    digits: &[BufDigit<'_>],
    f: &Factor,
    dir: Direction,
    truncate: bool,
    is_packet: bool,
) -> Result<Vec<Entry>, DeriveError> {
    let broadcast = Entry {
        size: f.extent,
        stride: 0,
    };
    match &f.axis {
        None if truncate => Ok(Vec::new()),
        None => Ok(vec![broadcast]),
        Some(a) if a.skew.is_some() => {
            Err(DeriveError::Unsupported("skewed axis in the stream".into()))
        }
        Some(a) if !digits.iter().any(|d| holds_axis(d, a)) => Ok(vec![broadcast]),
        Some(a) => held_entries(digits, a, f, dir, truncate, is_packet),
    }
}

/// Whether buffer digit `d` is a factor of axis `a`.
fn holds_axis(d: &BufDigit<'_>, a: &Axis) -> bool {
    d.f.axis.as_ref().is_some_and(|b| b.name == a.name)
}

/// The entries reading the stream digit `f` of axis `a` from the buffer digits that hold it,
/// innermost first: one per buffer digit it spans, split where the buffer splits the axis.
fn held_entries(
    digits: &[BufDigit<'_>],
    a: &Axis,
    f: &Factor,
    dir: Direction,
    truncate: bool,
    is_packet: bool,
) -> Result<Vec<Entry>, DeriveError> {
    let mut parts: Vec<Entry> = Vec::new();
    let (mut c, mut e, mut v) = (f.coef, f.extent, f.valid);
    loop {
        let holder = digits
            .iter()
            .find(|d| holds_axis(d, a) && c >= d.f.coef && c < d.f.coef.saturating_mul(d.f.valid));
        let Some(h) = holder else {
            return Err(DeriveError::Insufficient {
                axis: a.name.to_string(),
                needed: factor_text(a, c, v),
                have: buffer_text(digits, a),
                reverse: false,
                slot: if is_packet { "Packet" } else { "Time" },
            });
        };
        if !c.is_multiple_of(h.f.coef) {
            return Err(DeriveError::Incompatible {
                axis: a.name.to_string(),
                buf_split: h.f.coef,
                stream_split: c,
            });
        }
        let top = h.f.coef.saturating_mul(h.f.valid);
        let stride = h.stride.saturating_mul(c / h.f.coef);
        // The last entry, when the digit ends within `h` (or may run on past it).
        if let Some(size) = last_in_digit(digits, h, a, (c, e, v), dir, truncate) {
            parts.push(Entry { size, stride });
            return Ok(parts);
        }
        if !top.is_multiple_of(c) {
            return Err(DeriveError::Incompatible {
                axis: a.name.to_string(),
                buf_split: top,
                stream_split: c,
            });
        }
        let q = top / c;
        if !e.is_multiple_of(q) {
            // The axis's next buffer digit continues `h` in memory: one run, read with one
            // stride (`G / 4` of 3 from `m![G # 16 / 8, G # 16 % 8]`, G = 12).
            if continues_in_memory(digits, h, a, c.saturating_mul(v)) {
                parts.push(Entry { size: e, stride });
                return Ok(parts);
            }
            return Err(DeriveError::Incompatible {
                axis: a.name.to_string(),
                buf_split: top,
                stream_split: c.saturating_mul(e),
            });
        }
        parts.push(Entry { size: q, stride });
        c = top;
        e /= q;
        v = v.div_ceil(q);
    }
}

/// Whether the buffer digit of axis `a` after `h` (the factor `h` ends at) lies right after
/// `h` in memory, with no padding of `h` between them, and holds the stream digit's end
/// (`reach`, its coefficient times its valid positions).
fn continues_in_memory(digits: &[BufDigit<'_>], h: &BufDigit<'_>, a: &Axis, reach: u64) -> bool {
    let top = h.f.coef.saturating_mul(h.f.valid);
    digits.iter().any(|n| {
        holds_axis(n, a)
            && n.f.coef == top
            && h.f.extent == h.f.valid
            && n.stride == h.stride.saturating_mul(h.f.extent)
            && reach <= top.saturating_mul(n.f.extent)
    })
}

/// The size of the last entry of a stream digit (from coefficient `c`, of extent `e` and `v`
/// valid positions) that buffer digit `h` ends: the digit fits in `h`; or a read runs on past
/// the axis's outermost buffer digit; or a commit keeps the leading elements of the packet.
/// `None` when the digit goes on into the next buffer digit.
fn last_in_digit(
    digits: &[BufDigit<'_>],
    h: &BufDigit<'_>,
    a: &Axis,
    (c, e, v): (u64, u64, u64),
    dir: Direction,
    truncate: bool,
) -> Option<u64> {
    let top = h.f.coef.saturating_mul(h.f.valid);
    // A padded buffer digit holds its padding in memory: a stream digit whose tail is padding
    // too may reach into it (masking, L1908-L1933).
    let room_top = h.f.coef.saturating_mul(h.f.extent);
    if c.saturating_mul(v) <= top || (h.f.extent > h.f.valid && c.saturating_mul(v) <= room_top) {
        // A commit writes only the leading elements the buffer holds, and truncation removes
        // the packet's padding (L2199-L2207).
        let room = h.f.coef.saturating_mul(h.f.extent) / c;
        return Some(if truncate {
            e.min(room.max(1)).min(v.max(1))
        } else {
            e
        });
    }
    // Reads may overfetch, writes may not (L1830-L1835, L2199-L2207): a read whose last valid
    // position starts inside the axis's outermost buffer digit runs on past its end, and what
    // it reads there lands in the stream's padding (`m![A # 1024 / 8]` over a buffer `m![A]`,
    // A = 1020).
    let outermost = !digits.iter().any(|d| holds_axis(d, a) && d.f.coef >= top);
    if dir == Direction::Read && outermost && c.saturating_mul(v.saturating_sub(1)) < top {
        return Some(e);
    }
    // The commit keeps the leading elements of the packet (truncation): the buffer holds
    // nothing of the axis past `h` (it is outermost), or nothing more of it within the stream
    // digit (a resize `H % 8 = 4` keeps 4 of the 8 the packet brings, L2201-L2234).
    let held_past_h = digits
        .iter()
        .any(|d| holds_axis(d, a) && d.f.coef >= top && d.f.coef < c.saturating_mul(v));
    (top.is_multiple_of(c) && truncate && (outermost || !held_past_h)).then_some(top / c)
}

/// What the buffer holds of axis `a`, outermost digit first (`N % 512`), for a message.
fn buffer_text(digits: &[BufDigit<'_>], a: &Axis) -> String {
    let mut parts: Vec<String> = digits
        .iter()
        .rev()
        .filter_map(|d| {
            let b = d.f.axis.as_ref()?;
            (b.name == a.name).then(|| factor_text(a, d.f.coef, d.f.valid))
        })
        .collect();
    if parts.is_empty() {
        parts.push("1".into());
    }
    parts.join(", ")
}

/// `entries` with each entry merged into the one outside it where `s1 == n2 * s2` (L1568),
/// and how many of them are the packet's: a temporal entry merged into the packet makes it
/// one packet entry (L1619).
fn merged(entries: &[Entry], packet_entries: usize) -> (Vec<Entry>, usize) {
    let mut merged: Vec<Entry> = Vec::new();
    let mut merged_packet = 0usize;
    let first_packet = entries.len() - packet_entries;
    for (k, e) in entries.iter().enumerate() {
        let is_packet = k >= first_packet;
        if let Some(last) = merged.last_mut()
            && last.stride == e.size.saturating_mul(e.stride)
        {
            last.size = last.size.saturating_mul(e.size);
            last.stride = e.stride;
            if is_packet && merged_packet == 0 {
                merged_packet = 1;
            }
            continue;
        }
        merged.push(*e);
        if is_packet {
            merged_packet += 1;
        }
    }
    (merged, merged_packet)
}

/// The single stride-1 entry of a read of `o` = `inner # n` when `inner` lies contiguously in
/// the buffer (its own configuration is one contiguous run of `inner.size` elements).
fn padded_run(
    buf: &Layout,
    o: &crate::mapping::layout::Opaque,
    dir: Direction,
    max_entries: usize,
) -> Option<Entry> {
    let crate::mapping::layout::OpaqueKind::Window(inner, _) = &o.kind else {
        return None;
    };
    if dir != Direction::Read || o.extent <= inner.size {
        return None;
    }
    let cfg = configure(buf, &[], &inner.dims, dir, max_entries).ok()?;
    let last = cfg.entries.last()?;
    (last.stride == 1 && contiguous_elements(&cfg.entries) == inner.size).then_some(Entry {
        size: o.extent,
        stride: 1,
    })
}

/// A write must fill every valid position of the buffer: each buffer factor's valid range must
/// be produced by the stream's factors of the same axis (else the stream is the insufficient
/// input and the buffer keeps stale data there).
fn check_written(digits: &[BufDigit<'_>], time: &[Dim], packet: &[Dim]) -> Result<(), DeriveError> {
    for d in digits {
        let Some(a) = &d.f.axis else { continue };
        let top = d.f.coef.saturating_mul(d.f.valid);
        let mut lo = d.f.coef;
        while lo < top {
            let next = time.iter().chain(packet.iter()).find_map(|s| match s {
                Dim::Factor(f)
                    if f.axis.as_ref().is_some_and(|b| b.name == a.name)
                        && f.coef <= lo
                        && lo < f.coef.saturating_mul(f.extent) =>
                {
                    // Padding positions are written too (with the pad value).
                    Some(f.coef.saturating_mul(f.extent))
                }
                _ => None,
            });
            match next {
                Some(hi) => lo = hi,
                None => {
                    return Err(DeriveError::Insufficient {
                        axis: a.name.to_string(),
                        needed: factor_text(a, lo, (top / lo.max(1)).max(1)),
                        have: String::new(),
                        reverse: true,
                        slot: "",
                    });
                }
            }
        }
    }
    Ok(())
}

/// Elements of the innermost physically contiguous run: the innermost entry when its stride is
/// 0 or 1 (else a single element), times each next-outer entry while `s1 == n2 * s2` (L1762).
pub fn contiguous_elements(entries: &[Entry]) -> u64 {
    let Some(last) = entries.last() else {
        return 1;
    };
    if last.stride > 1 {
        return 1;
    }
    let mut run = last.size;
    for w in entries.windows(2).rev() {
        let (outer, inner) = (w[0], w[1]);
        if outer.stride == inner.size.saturating_mul(inner.stride) {
            run = run.saturating_mul(outer.size);
        } else {
            break;
        }
    }
    run
}

/// Bytes of `n` elements of `bits` bits (packed for sub-byte types, constraints.md §22 A-3).
pub fn bytes(n: u64, bits: u32) -> u64 {
    n.saturating_mul(u64::from(bits)).div_ceil(8)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The largest size in `allowed` (bytes) that divides `gcd(packet_bytes, contiguous_bytes)`
/// (L1760-L1762; commit: L2226).
pub fn largest_divisor(packet_bytes: u64, contiguous_bytes: u64, allowed: &[u64]) -> Option<u64> {
    let g = gcd(packet_bytes, contiguous_bytes);
    allowed
        .iter()
        .copied()
        .filter(|&s| s > 0 && g > 0 && g.is_multiple_of(s))
        .max()
}

/// What the Fetch Engine derives from a configuration (L1757-L1762, L2046-L2058).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FetchSizes {
    pub packet_bytes: u64,
    pub contiguous_bytes: u64,
    /// `None` when no supported size divides `gcd(packet, contiguous)`.
    pub fetch_size: Option<u64>,
    pub fetches_per_packet: Option<u64>,
    /// `Time::SIZE * ceil(packet_bytes / fetch_size)` (L2058).
    pub cycles: Option<u64>,
}

/// Fetch sizes for a configuration of elements of `bits` bits; `allowed` is the context's list
/// of fetch sizes (`Target::fetch_sizes_main`, `fetch_sizes_sub`). The time steps are the
/// product of the temporal entries (`Time::SIZE`, less what merged into the packet).
pub fn fetch_sizes(cfg: &Config, bits: u32, allowed: &[u64]) -> FetchSizes {
    let packet_bytes = bytes(cfg.packet_size, bits);
    let contiguous_bytes = bytes(contiguous_elements(&cfg.entries), bits);
    let fetch_size = largest_divisor(packet_bytes, contiguous_bytes, allowed);
    let fetches_per_packet = fetch_size.map(|f| packet_bytes.div_ceil(f));
    let steps = time_steps(cfg);
    FetchSizes {
        packet_bytes,
        contiguous_bytes,
        fetch_size,
        fetches_per_packet,
        cycles: fetches_per_packet.map(|n| steps.saturating_mul(n)),
    }
}

/// The number of time steps: the product of the temporal entries, times the packets a packet
/// entry runs when a write's temporal entry merged into it (the packet entries hold
/// `packet_size` elements otherwise).
pub fn time_steps(cfg: &Config) -> u64 {
    let n = cfg.entries.len() - cfg.packet_entries.min(cfg.entries.len());
    let product = |es: &[Entry]| es.iter().fold(1u64, |acc, e| acc.saturating_mul(e.size));
    let packets = (product(&cfg.entries[n..]) / cfg.packet_size.max(1)).max(1);
    product(&cfg.entries[..n]).saturating_mul(packets)
}

/// The fetch sizes (bytes) the compiler may choose for a fetch of `from` elements producing
/// `to` elements: the context's sizes (main 1-32 bytes; sub 8, or 4 when casting i4 to i32,
/// L1757-L1759), and for a casting main fetch only those whose output stays within one flit
/// (L1996-L2021; the manual's i8 → i32 fetch of 32-byte packets, L1729-L1740, is valid, so the
/// compiler lowers fetch_size rather than failing).
pub fn fetch_size_choices(
    target: &Target,
    sub: bool,
    from: Option<Dtype>,
    to: Option<Dtype>,
) -> Vec<u64> {
    let (fb, tb) = (from.map(Dtype::bits), to.map(Dtype::bits));
    if sub {
        let subs = target.fetch_sizes_sub.iter().copied();
        let pick = if from == Some(Dtype::I4) && to == Some(Dtype::I32) {
            subs.min()
        } else {
            subs.max()
        };
        return pick.into_iter().collect();
    }
    let all = target.fetch_sizes_main.to_vec();
    match (fb, tb) {
        (Some(f), Some(t)) if t > f => {
            let capped: Vec<u64> = all
                .iter()
                .copied()
                .filter(|&s| {
                    s.saturating_mul(u64::from(t)) <= target.flit_bytes.saturating_mul(u64::from(f))
                })
                .collect();
            if capped.is_empty() { all } else { capped }
        }
        _ => all,
    }
}

/// What the Commit Engine derives (L2224-L2230): `commit_in_size` is the packet after
/// truncation, `commit_size = gcd(contiguous, commit_in_size)` when the context supports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CommitSizes {
    pub commit_in_size: u64,
    pub contiguous_bytes: u64,
    pub commit_size: Option<u64>,
    /// Why `commit_in_size` is more than the truncated packet's bytes, if it is.
    pub widened: Widened,
}

/// Why a commit writes more than the packet it keeps after truncation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Widened {
    /// It writes exactly the kept packet.
    No,
    /// The kept packet is not a supported commit_in_size and the destination pads each row to
    /// one: the commit writes the row, padding included (L7672 `C # 6` writes 8 bytes, L7754
    /// `[B, C] # 22` the full 32-byte flit).
    Padding,
    /// Neither: commits move whole 8-byte units, so the tail of the packet is written with a
    /// dummy (L7699).
    Rounded,
}

/// The commit sizes of a configuration alone: the packet as truncated, `commit_size = gcd`
/// when `allowed` has it (L2243). [`commit_sizes_into`] is what a commit into a buffer writes.
pub fn commit_sizes(cfg: &Config, bits: u32, allowed: &[u64]) -> CommitSizes {
    let commit_in_size = bytes(cfg.packet_size, bits);
    let contiguous_bytes = bytes(contiguous_elements(&cfg.entries), bits);
    let g = gcd(contiguous_bytes, commit_in_size);
    CommitSizes {
        commit_in_size,
        contiguous_bytes,
        commit_size: allowed.contains(&g).then_some(g),
        widened: Widened::No,
    }
}

/// What the Commit Engine writes for a commit of `packet_elems`-element packets into `buf`
/// under `cfg` (L2224-L2248, L7672-L7699), the one derivation every reader uses:
///
/// - `commit_in_size` is the kept packet when `in_sizes` (8, 16, 24, 32 bytes, L2330) has it;
///   otherwise the row each time step owns (up to the nearest position another step writes),
///   when that is a supported size: the rest of the row is the destination's own padding,
///   written with the packet ([`Widened::Padding`]); otherwise, when the kept packet is not
///   whole `unit`-byte units, it rounded up to them ([`Widened::Rounded`], L7699).
/// - `contiguous_bytes` counts the written row as contiguous (the padding is written too).
/// - `commit_size` is the largest of the context's `sizes` dividing
///   `gcd(contiguous_bytes, commit_in_size)` (L2243; the sub context writes 8 bytes, L2248).
pub fn commit_sizes_into(
    buf: &Layout,
    packet_elems: u64,
    cfg: &Config,
    bits: u32,
    in_sizes: &[u64],
    sizes: &[u64],
    unit: u64,
) -> CommitSizes {
    let kept = bytes(cfg.packet_size, bits);
    // What one flit holds is read from the entries term by term: a merge may have folded a
    // loop into the packet's entry (L1568), but the flit stays the kept packet.
    let n = cfg.initial.len();
    let p = cfg.initial_packet_entries.min(n);
    let (cin, widened) = if in_sizes.contains(&kept) {
        (kept, Widened::No)
    } else {
        let row = cfg.initial[..n - p]
            .iter()
            .filter(|e| e.size > 1 && e.stride > 0)
            .map(|e| e.stride)
            .min()
            .unwrap_or(buf.size);
        let p = bytes(row.min(packet_elems), bits);
        let unit = unit.max(1);
        if p > kept && in_sizes.contains(&p) {
            (p, Widened::Padding)
        } else if !kept.is_multiple_of(unit) {
            (kept.div_ceil(unit).saturating_mul(unit), Widened::Rounded)
        } else {
            (kept, Widened::No)
        }
    };
    let contiguous_bytes = if cin > kept
        && bits > 0
        && contiguous_elements(&cfg.initial[n - p..]) == cfg.packet_size
    {
        // The written row is one run: the packet's (contiguous) entries and the padding after.
        let mut entries = cfg.initial[..n - p].to_vec();
        entries.push(Entry {
            size: cin.saturating_mul(8) / u64::from(bits),
            stride: 1,
        });
        bytes(contiguous_elements(&entries), bits)
    } else {
        bytes(contiguous_elements(&cfg.entries), bits)
    };
    CommitSizes {
        commit_in_size: cin,
        contiguous_bytes,
        commit_size: largest_divisor(contiguous_bytes, cin, sizes),
        widened,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::testing::{lay, terms};

    fn cfg(axes: &str, buf: &str, time: &str, packet: &str, dir: Direction) -> Config {
        configure(
            &lay(axes, buf),
            &terms(axes, time),
            &terms(axes, packet),
            dir,
            8,
        )
        .expect("configures")
    }

    fn read(axes: &str, buf: &str, time: &str, packet: &str) -> Config {
        cfg(axes, buf, time, packet, Direction::Read)
    }

    #[test]
    fn l1394_nchw_to_whcn() {
        // L1394: "[8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1"
        let c = read(
            "N = 4, C = 3, H = 8, W = 8",
            "N, C, H, W",
            "W, H, C, N",
            "1",
        );
        assert_eq!(c.to_string(), "[8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1");
        // The write of the same stream derives the identical configuration (L1417).
        let w = cfg(
            "N = 4, C = 3, H = 8, W = 8",
            "N, C, H, W",
            "W, H, C, N",
            "1",
            Direction::Write,
        );
        assert_eq!(w.to_string(), c.to_string());
    }

    #[test]
    fn l1443_rearranging_axes() {
        // L1443-L1458: [B 8 : 32, A 8 : 256, C # 16 16 : 1] : 16, maximum fetch_size 16.
        let c = read("A = 8, B = 8, C = 8", "A, B, C # 32", "B, A", "C # 16");
        assert_eq!(c.to_string(), "[8 : 32, 8 : 256, 16 : 1] : 16");
        assert_eq!(
            fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]).fetch_size,
            Some(16)
        );
    }

    #[test]
    fn l1477_splitting_axes() {
        // L1477-L1496: [2 : 64, 4 : 8, 4 : 128, 2 : 32, 32 : 1] : 32, fetch_size 32.
        let c = read(
            "A = 8, B = 8, C = 4",
            "A, B, C # 8",
            "A % 2, B % 4, A / 2, B / 4",
            "C # 32",
        );
        assert_eq!(
            c.to_string(),
            "[2 : 64, 4 : 8, 4 : 128, 2 : 32, 32 : 1] : 32"
        );
        assert_eq!(
            fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]).fetch_size,
            Some(32)
        );
    }

    #[test]
    fn l1513_slicing_axes() {
        // L1513-L1532: [4 : 256, 3 : 64, 2 : 32, 2 : 8, 8 : 1] : 8, fetch_size 8.
        let c = read(
            "A = 16, B = 8, C = 8",
            "A, B, C",
            "A / 4, A % 4 = 3, B / 4, B % 4 = 2",
            "C",
        );
        assert_eq!(c.to_string(), "[4 : 256, 3 : 64, 2 : 32, 2 : 8, 8 : 1] : 8");
        assert_eq!(
            fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]).fetch_size,
            Some(8)
        );
    }

    #[test]
    fn l1549_broadcasting_axes() {
        // L1549-L1565: [T 4 : 0, A 16 : 1, P 4 : 0] : 4, fetch_size 4.
        let c = read("A = 16, T = 4, P = 4", "A", "T, A", "P");
        assert_eq!(c.to_string(), "[4 : 0, 16 : 1, 4 : 0] : 4");
        assert_eq!(
            fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]).fetch_size,
            Some(4)
        );
    }

    #[test]
    fn l1584_merging_entries() {
        // L1584-L1627: 9 initial entries merge to 6; the packet grows from 8 to 16 (L1619).
        let c = read(
            "N = 8, C = 8, H = 8, W = 32",
            "N, C, H, W",
            "W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2",
            "W % 8",
        );
        let initial: Vec<(u64, u64)> = c.initial.iter().map(|e| (e.size, e.stride)).collect();
        assert_eq!(
            initial,
            [
                (2, 16),
                (2, 32),
                (4, 64),
                (4, 512),
                (2, 256),
                (4, 4096),
                (2, 2048),
                (2, 8),
                (8, 1)
            ]
        );
        assert_eq!(
            c.to_string(),
            "[2 : 16, 2 : 32, 4 : 64, 8 : 256, 8 : 2048, 16 : 1] : 16"
        );
        assert_eq!(c.packet_entries, 1);
        // At most 8 entries: no merge (the compiler merges only past the limit, L1568).
        let canonical = configure(
            &lay("N = 8, C = 8, H = 8, W = 32", "N, C, H, W"),
            &lay(
                "N = 8, C = 8, H = 8, W = 32",
                "W / 16, H % 2, H / 2, C / 2, C % 2, N / 2, N % 2, W / 8 % 2",
            )
            .dims,
            &lay("N = 8, C = 8, H = 8, W = 32", "W % 8").dims,
            Direction::Read,
            8,
        )
        .expect("configures");
        assert_eq!(canonical.entries.len(), 7);
        assert_eq!(canonical.entries, canonical.initial);
    }

    #[test]
    fn l1361_config_struct() {
        // L1361-L1386: the Config struct example is the NCHW -> WHCN read (bf16, packet 1).
        let c = read(
            "N = 4, C = 3, H = 8, W = 8",
            "N, C, H, W",
            "W, H, C, N",
            "1",
        );
        assert_eq!(c.packet_size, 1);
        let f = fetch_sizes(&c, 16, &[1, 2, 4, 8, 16, 32]);
        assert_eq!(
            (f.packet_bytes, f.fetch_size, f.cycles),
            (2, Some(2), Some(768))
        );
    }

    #[test]
    fn l1641_insufficient_input() {
        // L1641-L1658: Time requires N / 512, but Buf only contains N % 512.
        let e = configure(
            &lay("N = 2048", "N % 512"),
            &lay("N = 2048", "N / 512").dims,
            &lay("N = 2048", "N % 512").dims,
            Direction::Read,
            8,
        );
        assert_eq!(
            e,
            Err(DeriveError::Insufficient {
                axis: "N".into(),
                needed: "N / 512".into(),
                have: "N % 512".into(),
                reverse: false,
                slot: "Time",
            })
        );
    }

    #[test]
    fn l1662_incompatible_shapes() {
        // L1662-L1683: base 5 in the buffer, base 3 in the packet.
        let e = configure(
            &lay("A = 15", "A % 5, A / 5"),
            &[],
            &lay("A = 15", "A % 3, A / 3").dims,
            Direction::Read,
            8,
        );
        assert!(
            matches!(e, Err(DeriveError::Incompatible { ref axis, buf_split: 5, stream_split: 3 }) if axis == "A"),
            "{e:?}"
        );
    }

    #[test]
    fn a_split_that_spans_contiguous_buffer_digits_is_one_entry() {
        // G = 12 padded to 16 and split by 8 in the buffer is still 16 contiguous elements: the
        // stream's `G / 4` (3 of stride 4) reads across both digits (a blind crate's fix).
        let c = read("G = 12", "G # 16 / 8, G # 16 % 8", "G / 4", "G % 4");
        assert_eq!(c.to_string(), "[3 : 4, 4 : 1] : 4");
        // A gap between the digits (the inner one padded) keeps them apart.
        let e = configure(
            &lay("G = 12", "G / 6, G % 6 # 8"),
            &lay("G = 12", "G / 4").dims,
            &lay("G = 12", "G % 4").dims,
            Direction::Read,
            8,
        );
        assert!(matches!(e, Err(DeriveError::Incompatible { .. })), "{e:?}");
    }

    #[test]
    fn l1769_contiguous_sram_access_size() {
        // L1769-L1804: 384, 32 and 8 contiguous elements (i8).
        let ax = "N = 4, C = 3, H = 4, W = 8";
        let c = read(ax, "N, C, H, W", "N, C, H", "W");
        assert_eq!(c.to_string(), "[4 : 96, 3 : 32, 4 : 8, 8 : 1] : 8");
        assert_eq!(contiguous_elements(&c.entries), 384);
        let c = read(ax, "N, C, H, W", "C", "N, H, W");
        assert_eq!(c.to_string(), "[3 : 32, 4 : 96, 4 : 8, 8 : 1] : 128");
        assert_eq!(contiguous_elements(&c.entries), 32);
        let c = read(ax, "N, C, H, W", "1", "N, H, C, W");
        assert_eq!(c.to_string(), "[4 : 96, 4 : 8, 3 : 32, 8 : 1] : 384");
        assert_eq!(contiguous_elements(&c.entries), 8);
    }

    #[test]
    fn l1816_padding_packets_cycles() {
        // L1816-L1835: f8e4m3, A = 3, B = 5, C = 2: 15 cycles, then 3 cycles.
        let ax = "A = 3, B = 5, C = 2";
        let all = [1, 2, 4, 8, 16, 32];
        let c = read(ax, "A, B, C", "A, B", "C");
        assert_eq!(fetch_sizes(&c, 8, &all).cycles, Some(15));
        let c = configure(
            &lay(ax, "A, B, C"),
            &lay(ax, "A").dims,
            &lay(ax, "[B, C] # 16").dims,
            Direction::Read,
            8,
        )
        .expect("configures");
        assert_eq!(c.to_string(), "[3 : 10, 8 : 2, 2 : 1] : 16");
        let f = fetch_sizes(&c, 8, &all);
        assert_eq!((f.fetch_size, f.cycles), (Some(16), Some(3)));
        // L1830-L1835: `m![[A, B, C] # 32]` in one 32-byte fetch, 1 cycle.
        let c = configure(
            &lay(ax, "A, B, C"),
            &[],
            &lay(ax, "[A, B, C] # 32").dims,
            Direction::Read,
            8,
        )
        .expect("configures");
        let f = fetch_sizes(&c, 8, &all);
        assert_eq!(
            (f.packet_bytes, f.fetch_size, f.cycles),
            (32, Some(32), Some(1))
        );
    }

    #[test]
    fn l2067_batching() {
        // L2067-L2105 with packed i4 (constraints.md §22 A-3): the cycle counts 48, 24, 12, 12
        // are the manual's; the byte sizes are half the manual's (it counts i4 as 1 byte).
        let ax = "N = 4, C = 3, H = 4, W = 8";
        let all = [1, 2, 4, 8, 16, 32];
        let cases = [
            ("N, C, H", "W", 48),
            ("N, C, H / 2", "H % 2, W", 24),
            ("N, C", "H, W", 12),
            ("N", "C, H, W", 12),
        ];
        for (t, p, cycles) in cases {
            let c = read(ax, "N, C, H, W", t, p);
            assert_eq!(fetch_sizes(&c, 4, &all).cycles, Some(cycles), "{t} / {p}");
        }
        let c = read(ax, "N, C, H, W", "N, C, H / 2", "H % 2, W");
        assert_eq!(c.to_string(), "[4 : 96, 3 : 32, 2 : 16, 2 : 8, 8 : 1] : 16");
        // fetch_batch_4: 96 elements per packet, fetch 16 B packed (32 B in the manual), 3 fetches.
        let c = read(ax, "N, C, H, W", "N", "C, H, W");
        assert_eq!(fetch_sizes(&c, 4, &all).fetches_per_packet, Some(3));
    }

    #[test]
    fn l2263_commit_sequencer() {
        // L2263-L2310: the Commit Engine's configurations and commit sizes.
        let ax = "M = 4, K = 2, W = 8, N = 16";
        let sizes = [8, 16, 24, 32];
        let w = |buf: &str, t: &str, p: &str| cfg(ax, buf, t, p, Direction::Write);
        let c = w("M, K, W", "M, K", "W # 32");
        assert_eq!(c.to_string(), "[4 : 16, 2 : 8, 8 : 1] : 8");
        let s = commit_sizes(&c, 8, &sizes);
        assert_eq!(
            (s.contiguous_bytes, s.commit_in_size, s.commit_size),
            (64, 8, Some(8))
        );
        let c = w("K, M, W", "M, K", "W");
        assert_eq!(c.to_string(), "[4 : 8, 2 : 32, 8 : 1] : 8");
        let s = commit_sizes(&c, 32, &sizes);
        assert_eq!(
            (s.contiguous_bytes, s.commit_in_size, s.commit_size),
            (32, 32, Some(32))
        );
        let c = w("K, M, N = 8", "M, K", "N");
        assert_eq!(c.to_string(), "[4 : 8, 2 : 32, 8 : 1] : 8");
        let s = commit_sizes(&c, 16, &sizes);
        assert_eq!(
            (s.contiguous_bytes, s.commit_in_size, s.commit_size),
            (16, 16, Some(16))
        );
        let c = w("K, M, W # 16", "K", "M, W");
        assert_eq!(c.to_string(), "[2 : 64, 4 : 16, 8 : 1] : 32");
        let s = commit_sizes(&c, 8, &sizes);
        assert_eq!(
            (s.contiguous_bytes, s.commit_in_size, s.commit_size),
            (8, 32, Some(8))
        );
    }

    #[test]
    fn merged_commit_keeps_one_flit() {
        // A commit of 8 time loops and a 32-byte i8 packet: 9 entries, all contiguous, merge
        // into one (L1568). The merge folds the loops into the packet's entry, but the Commit
        // Engine still takes one 32-byte flit per time step (L2191) and keeps 32 bytes of it:
        // commit_in_size 32, 256 steps, the 8192-byte run written 32 bytes at a time.
        let ax = "A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, W = 32";
        let c = cfg(
            ax,
            "A, B, C, D, E, F, G, H, W",
            "A, B, C, D, E, F, G, H",
            "W",
            Direction::Write,
        );
        assert_eq!(c.initial.len(), 9);
        assert_eq!((c.initial_packet_entries, c.packet_entries), (1, 1));
        assert_eq!(c.to_string(), "[8192 : 1] : 32");
        assert_eq!(time_steps(&c), 256);
        let s = commit_sizes_into(
            &lay(ax, "A, B, C, D, E, F, G, H, W"),
            32,
            &c,
            8,
            &[8, 16, 24, 32],
            &[8, 16, 24, 32],
            8,
        );
        assert_eq!(
            (
                s.commit_in_size,
                s.contiguous_bytes,
                s.commit_size,
                s.widened
            ),
            (32, 8192, Some(32), Widened::No)
        );
        // Truncated to 8 of each flit (W = 8 in the Element, `W # 32` in the stream): the merged
        // entry is 2048 elements, the packet 8 bytes.
        let ax = "A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, W = 8";
        let c = cfg(
            ax,
            "A, B, C, D, E, F, G, H, W",
            "A, B, C, D, E, F, G, H",
            "W # 32",
            Direction::Write,
        );
        assert_eq!(c.to_string(), "[2048 : 1] : 8");
        assert_eq!(time_steps(&c), 256);
        assert_eq!(commit_sizes(&c, 8, &[8, 16, 24, 32]).commit_in_size, 8);
        // The same stream read grows its packet instead (L1619): one step of 8192 elements.
        let r = read(
            "A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, W = 32",
            "A, B, C, D, E, F, G, H, W",
            "A, B, C, D, E, F, G, H",
            "W",
        );
        assert_eq!(r.to_string(), "[8192 : 1] : 8192");
        assert_eq!(time_steps(&r), 1);
    }

    #[test]
    fn writes_need_every_buffer_position() {
        // A write whose stream lacks a factor of the buffer leaves positions unwritten.
        let e = configure(
            &lay("A = 8, B = 4", "A, B"),
            &lay("A = 8, B = 4", "A").dims,
            &lay("A = 8, B = 4", "B % 2").dims,
            Direction::Write,
            8,
        );
        assert!(
            matches!(e, Err(DeriveError::Insufficient { reverse: true, .. })),
            "{e:?}"
        );
    }

    #[test]
    fn l2000_cast_fetch_sizes() {
        // L2000-L2021: a casting fetch's output stays within 32 bytes; sub context 4 bytes for
        // i4 -> i32, else 8.
        use crate::target::RNGD;
        let main = |f: &str, t: &str| {
            fetch_size_choices(&RNGD, false, Dtype::from_name(f), Dtype::from_name(t))
        };
        assert_eq!(main("i8", "i32").last(), Some(&8));
        assert_eq!(main("i4", "i32").last(), Some(&4));
        assert_eq!(main("i8", "i8").last(), Some(&32));
        assert_eq!(main("bf16", "f32").last(), Some(&16));
        assert_eq!(main("f32", "bf16").last(), Some(&32));
        let sub = |f: &str, t: &str| {
            fetch_size_choices(&RNGD, true, Dtype::from_name(f), Dtype::from_name(t))
        };
        assert_eq!(sub("i4", "i32"), [4]);
        assert_eq!(sub("i8", "i32"), [8]);
        // L1980-L1994: i8 -> i32, A = 8: one 8-byte fetch makes the 32-byte i32 packet.
        let c = read("A = 8", "A", "1", "A");
        let f = fetch_sizes(&c, 8, &main("i8", "i32"));
        assert_eq!(
            (f.fetch_size, f.fetches_per_packet, f.cycles),
            (Some(8), Some(1), Some(1))
        );
        // L1729-L1740: i8 -> i32 of a 32-byte packet: 8-byte fetches, 4 per packet.
        let c = read("A = 512, B = 32", "A, B", "A", "B");
        let f = fetch_sizes(&c, 8, &main("i8", "i32"));
        assert_eq!((f.fetch_size, f.fetches_per_packet), (Some(8), Some(4)));
    }

    #[test]
    fn l1908_masking_case_1() {
        // L1908-L1915: Element m![A, B # 96] (B = 90), Time m![A, B' / 32], Packet m![B' % 32]:
        // [32 : 96, 3 : 32, 32 : 1] : 32 (the manual's left padding shifts base_addr only).
        let c = read(
            "A = 32, B = 90",
            "A, B # 96",
            "A, B # 96 / 32",
            "B # 96 % 32",
        );
        assert_eq!(c.to_string(), "[32 : 96, 3 : 32, 32 : 1] : 32");
        assert_eq!(time_steps(&c), 96);
    }

    #[test]
    fn l1917_masking_case_2() {
        // L1917-L1925: Time m![B' / 32, A]: [3 : 32, 32 : 96, 32 : 1] : 32, 96 cycles.
        let c = read(
            "A = 32, B = 90",
            "A, B # 96",
            "B # 96 / 32, A",
            "B # 96 % 32",
        );
        assert_eq!(c.to_string(), "[3 : 32, 32 : 96, 32 : 1] : 32");
        assert_eq!(time_steps(&c), 96);
    }

    #[test]
    fn l1926_masking_case_3() {
        // L1926-L1935: f32, Element m![A, B # 128] (B = 97), Time m![A, B' / 16, 1], Packet
        // m![B' % 16]: the manual's [32 : 128, 8 : 16, 1 : 0, 16 : 1] : 16 (visa-lint drops
        // the size-1 entry) and 32 * 8 = 256 cycles of 64-byte packets (16 f32 = 2 fetches of 32).
        let c = read(
            "A = 32, B = 97",
            "A, B # 128",
            "A, B # 128 / 16",
            "B # 128 % 16",
        );
        assert_eq!(c.to_string(), "[32 : 128, 8 : 16, 16 : 1] : 16");
        assert_eq!(time_steps(&c), 256);
        let f = fetch_sizes(&c, 32, &[1, 2, 4, 8, 16, 32]);
        assert_eq!((f.packet_bytes, f.fetch_size), (64, Some(32)));
    }

    #[test]
    fn l2068_batching_sizes() {
        // L2061-L2107 (fetch_batch_1..4): contiguous_sram_access_size 384 (L2068, L2079, L2090,
        // L2101); packet_size 8, 16, 32, 96 bytes (L2069, L2080, L2091, L2102); fetch_size 8,
        // 16, 32, 32 (L2070, L2081, L2092, L2103); fetches_per_packet 1, 1, 1, 3 (L2071, L2082,
        // L2093, L2105); cycles 48, 24, 12, 12. The manual counts i4 as one byte: at 8 bits per
        // element the algorithm prints exactly these numbers. visa-lint packs i4
        // (constraints.md §22 A-3): bytes halve, fetches per packet and cycles are unchanged.
        // L2103's "gcd(96, 384) = 32" is docs/manual-notes.md N-8 (the gcd is 96; 32 is the
        // largest supported divisor).
        let ax = "N = 4, C = 3, H = 4, W = 8";
        let all = [1, 2, 4, 8, 16, 32];
        let cases = [
            ("N, C, H", "W", (8, 8, 1, 48), (4, 4, 1, 48)),
            ("N, C, H / 2", "H % 2, W", (16, 16, 1, 24), (8, 8, 1, 24)),
            ("N, C", "H, W", (32, 32, 1, 12), (16, 16, 1, 12)),
            ("N", "C, H, W", (96, 32, 3, 12), (48, 16, 3, 12)),
        ];
        for (t, p, manual, packed) in cases {
            let c = read(ax, "N, C, H, W", t, p);
            assert_eq!(contiguous_elements(&c.entries), 384, "{t} / {p}");
            for (bits, want) in [(8, manual), (4, packed)] {
                let f = fetch_sizes(&c, bits, &all);
                assert_eq!(
                    (f.packet_bytes, f.fetch_size, f.fetches_per_packet, f.cycles),
                    (want.0, Some(want.1), Some(want.2), Some(want.3)),
                    "{t} / {p} at {bits} bits"
                );
            }
        }
    }

    #[test]
    fn l2054_forty_byte_batch() {
        // L2053-L2054 (and L2123): fetch_size 8 bytes, fetches_per_packet 5, a 40-byte packet.
        let c = read("T = 4, A = 40", "T, A", "T", "A");
        let f = fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]);
        assert_eq!(
            (f.packet_bytes, f.fetch_size, f.fetches_per_packet, f.cycles),
            (40, Some(8), Some(5), Some(20))
        );
    }

    #[test]
    fn l7656_axis_permutation_fetch() {
        // L7623-L7656 (Fetch and Commit kernel page, Example 1): f8 `m![A, B, C]` (A = 3, B = 5,
        // C = 2) fetched as Time m![A, B], Packet m![C # 6]: "15 cycles (3×5)" (L7655, L7695),
        // "Fetch size: 8 bytes per cycle" (L7656). `# 6` is read as the 8-byte row the text
        // describes ("2 C elements plus 6 bytes padding"), i.e. `C # 8` (constraints.md §22 A-6).
        let ax = "A = 3, B = 5, C = 2";
        let c = read(ax, "A, B, C", "A, B", "C # 8");
        let f = fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]);
        assert_eq!(
            (f.packet_bytes, f.fetch_size, f.fetches_per_packet, f.cycles),
            (8, Some(8), Some(1), Some(15))
        );
    }

    #[test]
    fn l7741_full_flit_fetch() {
        // L7712-L7756 (Example 2): Time m![A], Packet m![[B, C] # 22] read as the 32-byte packet
        // the text describes (§22 A-6): "Fetch size: 32 bytes per cycle" (L7741), "Only 3
        // cycles" (L7747, L7755). L7740's "Time = m![A, B] - 15 cycles" contradicts the code's
        // `m![A]` and L7747 (manual slip); the algorithm follows the code.
        let ax = "A = 3, B = 5, C = 2";
        let c = configure(
            &lay(ax, "A, B, C"),
            &lay(ax, "A").dims,
            &lay(ax, "[B, C] # 32").dims,
            Direction::Read,
            8,
        )
        .expect("configures");
        let f = fetch_sizes(&c, 8, &[1, 2, 4, 8, 16, 32]);
        assert_eq!(
            (f.packet_bytes, f.fetch_size, f.fetches_per_packet, f.cycles),
            (32, Some(32), Some(1), Some(3))
        );
    }

    #[test]
    fn l7822_tail_padding_commits() {
        // L7809-L7858 (Example 3): A = 65 (f8) rows padded to 72/80/88/96 bytes (the manual's
        // `A # 7/15/23/31` "add n", constraints.md §22 A-6). The commit input is one 32-byte
        // flit `A % n # 32`; the write sequencer (L7822, L7834, L7846, L7858)
        // [B=2:row, (A # row)/n=row/n:n, A=n:1] / n and commit_in_size n = 24, 16, 8, 32
        // (L7818, L7830, L7842, L7854). The fetch side (fetch_size, cycles 6/10/22/6, L7864-L7867)
        // is `rules::commit::tests::l7860_tail_padding_table`.
        let ax = "A = 65, B = 2";
        for (row, n) in [(72u64, 24u64), (80, 16), (88, 8), (96, 32)] {
            let buf = format!("B, A # {row}");
            let c = cfg(
                ax,
                &buf,
                &format!("B, A # {row} / {n}"),
                &format!("A # {row} % {n} # 32"),
                Direction::Write,
            );
            assert_eq!(
                c.to_string(),
                format!("[2 : {row}, {} : {n}, {n} : 1] : {n}", row / n),
                "row {row}"
            );
            let s = commit_sizes(&c, 8, &[8, 16, 24, 32]);
            assert_eq!((s.commit_in_size, s.commit_size), (n, Some(n)), "row {row}");
        }
    }

    #[test]
    fn largest_divisor_picks_supported_sizes() {
        assert_eq!(largest_divisor(48, 192, &[1, 2, 4, 8, 16, 32]), Some(16));
        assert_eq!(largest_divisor(96, 384, &[1, 2, 4, 8, 16, 32]), Some(32));
        assert_eq!(largest_divisor(12, 12, &[8]), None);
        assert_eq!(bytes(3, 4), 2);
    }
}
