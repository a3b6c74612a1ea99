// The boundary between a Rust program and its assert test (`verifiers.code.boundary.rust`).
//
// The same module is built into both programs (`mod referee_boundary;`, Rust 1.63). The
// program's side answers calls (`serve`), the test's side calls through stubs generated
// from the program's signatures (`Call`) and prints the verdict (`run_test`); the
// channel's fds are named by REFEREE_CHANNEL_IN and REFEREE_CHANNEL_OUT. Neither binary
// holds the other side's code: the test's expected values never exist in the program's
// process.
//
// Values cross by the type both sides declare (`Cross`): bool one byte; integers 64 bits
// (128 for i128/u128), checked against the receiving type's range; floats the bits of an
// f64; char a u32 (checked); a string a 64-bit count and its bytes (checked UTF-8);
// Option a presence byte; Result 0 or 1 then its value; sequences and maps a count and
// their items; tuples and arrays their members. A message is a 32-bit length, then its
// bytes: a call is the function's index (64 bits) and its arguments; a reply is 0, the
// result and the arguments taken by `&mut` (what a Rust caller sees changed), or 1 and
// the program's panic message. Everything read is checked against what is left of its
// message: a program that writes anything else to the channel fails the test, and can
// neither overrun nor starve the test's side.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fs::File;
use std::hash::Hash;
use std::io::{Read, Write};

pub const MAX_MESSAGE: usize = 64 << 20;
pub const MAX_ITEMS: usize = 1 << 22;

/// A malformed message.
#[derive(Debug)]
pub struct Broken(pub &'static str);

pub struct Reader {
    bytes: Vec<u8>,
    at: usize,
    items: usize,
}

impl Reader {
    pub fn new(bytes: Vec<u8>) -> Reader {
        Reader { bytes, at: 0, items: 0 }
    }

    pub fn left(&self) -> usize {
        self.bytes.len() - self.at
    }

    pub fn take(&mut self, n: usize) -> Result<&[u8], Broken> {
        if self.left() < n {
            return Err(Broken("a message ends too soon"));
        }
        self.at += n;
        Ok(&self.bytes[self.at - n..self.at])
    }

    pub fn byte(&mut self) -> Result<u8, Broken> {
        Ok(self.take(1)?[0])
    }

    pub fn u64(&mut self) -> Result<u64, Broken> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }

    pub fn u128(&mut self) -> Result<u128, Broken> {
        let mut b = [0u8; 16];
        b.copy_from_slice(self.take(16)?);
        Ok(u128::from_le_bytes(b))
    }

    /// A count of items that follow: never more than the bytes left, nor, over a
    /// message, than MAX_ITEMS.
    pub fn count(&mut self) -> Result<usize, Broken> {
        let n = self.u64()?;
        if n > self.left() as u64 {
            return Err(Broken("a count larger than its message"));
        }
        self.items += n as usize;
        if self.items > MAX_ITEMS {
            return Err(Broken("a message with too many items"));
        }
        Ok(n as usize)
    }

    pub fn flag(&mut self) -> Result<bool, Broken> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Broken("a presence byte that is neither 0 nor 1")),
        }
    }

    pub fn done(&self) -> Result<(), Broken> {
        if self.left() != 0 {
            return Err(Broken("a message with bytes left over"));
        }
        Ok(())
    }
}

/// What can be sent (sized or not: a `&str` argument goes as its text).
pub trait Put {
    fn put(&self, w: &mut Vec<u8>);
}

/// What can be received.
pub trait Cross: Put + Sized {
    fn get(r: &mut Reader) -> Result<Self, Broken>;
}

fn put_u64(w: &mut Vec<u8>, v: u64) {
    w.extend_from_slice(&v.to_le_bytes());
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl Put for $t {
            fn put(&self, w: &mut Vec<u8>) { put_u64(w, *self as i64 as u64); }
        }
        impl Cross for $t {
            fn get(r: &mut Reader) -> Result<Self, Broken> {
                let wide = r.u64()? as i64;
                <$t>::try_from(wide).map_err(|_| Broken("an integer out of its type's range"))
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, isize);

macro_rules! unsigned {
    ($($t:ty),*) => {$(
        impl Put for $t {
            fn put(&self, w: &mut Vec<u8>) { put_u64(w, *self as u64); }
        }
        impl Cross for $t {
            fn get(r: &mut Reader) -> Result<Self, Broken> {
                let wide = r.u64()?;
                <$t>::try_from(wide).map_err(|_| Broken("an integer out of its type's range"))
            }
        }
    )*};
}
unsigned!(u8, u16, u32, u64, usize);

impl Put for u128 {
    fn put(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&self.to_le_bytes());
    }
}
impl Cross for u128 {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        r.u128()
    }
}
impl Put for i128 {
    fn put(&self, w: &mut Vec<u8>) {
        w.extend_from_slice(&self.to_le_bytes());
    }
}
impl Cross for i128 {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(r.u128()? as i128)
    }
}

impl Put for f64 {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, self.to_bits());
    }
}
impl Cross for f64 {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(f64::from_bits(r.u64()?))
    }
}
impl Put for f32 {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, (*self as f64).to_bits());
    }
}
impl Cross for f32 {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(f64::from_bits(r.u64()?) as f32)
    }
}

impl Put for bool {
    fn put(&self, w: &mut Vec<u8>) {
        w.push(*self as u8);
    }
}
impl Cross for bool {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        match r.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Broken("a bool that is neither 0 nor 1")),
        }
    }
}

impl Put for char {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, *self as u64);
    }
}
impl Cross for char {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        let code = u32::try_from(r.u64()?).map_err(|_| Broken("a char out of range"))?;
        char::from_u32(code).ok_or(Broken("a char out of range"))
    }
}

impl Put for () {
    fn put(&self, _: &mut Vec<u8>) {}
}
impl Cross for () {
    fn get(_: &mut Reader) -> Result<Self, Broken> {
        Ok(())
    }
}

impl Put for str {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, self.len() as u64);
        w.extend_from_slice(self.as_bytes());
    }
}
impl Put for String {
    fn put(&self, w: &mut Vec<u8>) {
        self.as_str().put(w);
    }
}
impl Cross for String {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        let n = r.count()?;
        let bytes = r.take(n)?.to_vec();
        String::from_utf8(bytes).map_err(|_| Broken("a string that is not UTF-8"))
    }
}

impl<T: Put> Put for [T] {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, self.len() as u64);
        for item in self {
            item.put(w);
        }
    }
}
impl<T: Put> Put for Vec<T> {
    fn put(&self, w: &mut Vec<u8>) {
        self.as_slice().put(w);
    }
}
impl<T: Cross> Cross for Vec<T> {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        let n = r.count()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(T::get(r)?);
        }
        Ok(out)
    }
}
impl<T: Put> Put for VecDeque<T> {
    fn put(&self, w: &mut Vec<u8>) {
        put_u64(w, self.len() as u64);
        for item in self {
            item.put(w);
        }
    }
}
impl<T: Cross> Cross for VecDeque<T> {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(Vec::<T>::get(r)?.into())
    }
}
impl<T: Put, const N: usize> Put for [T; N] {
    fn put(&self, w: &mut Vec<u8>) {
        for item in self {
            item.put(w);
        }
    }
}
impl<T: Cross, const N: usize> Cross for [T; N] {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        let mut items = Vec::with_capacity(N.min(r.left()));
        for _ in 0..N {
            items.push(T::get(r)?);
        }
        items.try_into().map_err(|_| Broken("an array of another length"))
    }
}
impl<T: Put + ?Sized> Put for Box<T> {
    fn put(&self, w: &mut Vec<u8>) {
        (**self).put(w);
    }
}
impl<T: Cross> Cross for Box<T> {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(Box::new(T::get(r)?))
    }
}
impl<T: Put> Put for Option<T> {
    fn put(&self, w: &mut Vec<u8>) {
        match self {
            None => w.push(0),
            Some(value) => {
                w.push(1);
                value.put(w);
            }
        }
    }
}
impl<T: Cross> Cross for Option<T> {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(if r.flag()? { Some(T::get(r)?) } else { None })
    }
}
impl<T: Put, E: Put> Put for Result<T, E> {
    fn put(&self, w: &mut Vec<u8>) {
        match self {
            Ok(value) => {
                w.push(0);
                value.put(w);
            }
            Err(error) => {
                w.push(1);
                error.put(w);
            }
        }
    }
}
impl<T: Cross, E: Cross> Cross for Result<T, E> {
    fn get(r: &mut Reader) -> Result<Self, Broken> {
        Ok(if r.flag()? { Err(E::get(r)?) } else { Ok(T::get(r)?) })
    }
}

macro_rules! sets {
    ($set:ident, $($bound:path),*) => {
        impl<T: Put> Put for $set<T> {
            fn put(&self, w: &mut Vec<u8>) {
                put_u64(w, self.len() as u64);
                for item in self {
                    item.put(w);
                }
            }
        }
        impl<T: Cross $(+ $bound)*> Cross for $set<T> {
            fn get(r: &mut Reader) -> Result<Self, Broken> {
                let n = r.count()?;
                let mut out = $set::new();
                for _ in 0..n {
                    out.insert(T::get(r)?);
                }
                Ok(out)
            }
        }
    };
}
sets!(HashSet, Eq, Hash);
sets!(BTreeSet, Ord);

macro_rules! maps {
    ($map:ident, $($bound:path),*) => {
        impl<K: Put, V: Put> Put for $map<K, V> {
            fn put(&self, w: &mut Vec<u8>) {
                put_u64(w, self.len() as u64);
                for (key, value) in self {
                    key.put(w);
                    value.put(w);
                }
            }
        }
        impl<K: Cross $(+ $bound)*, V: Cross> Cross for $map<K, V> {
            fn get(r: &mut Reader) -> Result<Self, Broken> {
                let n = r.count()?;
                let mut out = $map::new();
                for _ in 0..n {
                    let key = K::get(r)?;
                    out.insert(key, V::get(r)?);
                }
                Ok(out)
            }
        }
    };
}
maps!(HashMap, Eq, Hash);
maps!(BTreeMap, Ord);

macro_rules! tuples {
    ($(($($name:ident $index:tt),+)),*) => {$(
        impl<$($name: Put),+> Put for ($($name,)+) {
            fn put(&self, w: &mut Vec<u8>) { $(self.$index.put(w);)+ }
        }
        impl<$($name: Cross),+> Cross for ($($name,)+) {
            fn get(r: &mut Reader) -> Result<Self, Broken> { Ok(($($name::get(r)?,)+)) }
        }
    )*};
}
tuples!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, F 5)
);

/// Send `value` (an argument, a result, an argument written back).
pub fn send<P: Put + ?Sized>(value: &P, w: &mut Vec<u8>) {
    value.put(w);
}

/// Leak `value` for a stub returning a reference (it lives as long as the test).
pub fn leaked<T>(value: T) -> &'static mut T {
    Box::leak(Box::new(value))
}

pub fn leaked_str(value: String) -> &'static mut str {
    Box::leak(value.into_boxed_str())
}

pub fn leaked_slice<T>(value: Vec<T>) -> &'static mut [T] {
    Box::leak(value.into_boxed_slice())
}

fn channel(name: &str) -> Option<File> {
    use std::os::unix::io::FromRawFd;
    let fd: i32 = std::env::var(name).ok()?.parse().ok()?;
    // SAFETY: the sandbox opened this fd for us and nothing else in the process uses it
    Some(unsafe { File::from_raw_fd(fd) })
}

fn send_message(out: &mut File, body: &[u8]) -> bool {
    let mut message = (body.len() as u32).to_le_bytes().to_vec();
    message.extend_from_slice(body);
    out.write_all(&message).is_ok()
}

fn read_full(input: &mut File, into: &mut [u8]) -> usize {
    let mut got = 0;
    while got < into.len() {
        match input.read(&mut into[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    got
}

/// The next message; None at the end of the channel.
fn receive(input: &mut File) -> Result<Option<Vec<u8>>, Broken> {
    let mut size = [0u8; 4];
    match read_full(input, &mut size) {
        0 => return Ok(None),
        4 => {}
        _ => return Err(Broken("a message cut short")),
    }
    let length = u32::from_le_bytes(size) as usize;
    if length > MAX_MESSAGE {
        return Err(Broken("a message larger than 64 MiB"));
    }
    let mut body = vec![0u8; length];
    if read_full(input, &mut body) < length {
        return Err(Broken("a message cut short"));
    }
    Ok(Some(body))
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    };
    text.chars().take(2000).collect()
}

// ---- the program's side ----------------------------------------------------------------

/// One of the program's functions, served (generated from its signature): read its
/// arguments, call it, write 0, its result and the arguments it took by `&mut`.
pub type Serving = fn(&mut Reader, &mut Vec<u8>) -> Result<(), Broken>;

/// Answer calls until the tests' side closes the channel.
pub fn serve(calls: &[Serving]) {
    let (mut input, mut out) = match (channel("REFEREE_CHANNEL_IN"), channel("REFEREE_CHANNEL_OUT")) {
        (Some(i), Some(o)) => (i, o),
        _ => std::process::exit(2),
    };
    loop {
        let body = match receive(&mut input) {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(Broken(why)) => broken(why),
        };
        let reply = answer(calls, body);
        let _ = std::io::stdout().flush();
        if !send_message(&mut out, &reply) {
            return;
        }
    }
}

fn broken(why: &str) -> ! {
    eprintln!("referee: {}", why);
    std::process::exit(2)
}

fn answer(calls: &[Serving], body: Vec<u8>) -> Vec<u8> {
    let mut r = Reader::new(body);
    let index = match r.u64() {
        Ok(i) if (i as usize) < calls.len() => i as usize,
        _ => broken("a call to no function"),
    };
    let mut reply = Vec::new();
    let call = std::panic::AssertUnwindSafe(|| calls[index](&mut r, &mut reply));
    match std::panic::catch_unwind(call) {
        Ok(Ok(())) => reply,
        Ok(Err(Broken(why))) => broken(why),
        Err(payload) => {
            let mut failed = vec![1u8];
            panic_text(&*payload).as_str().put(&mut failed);
            failed
        }
    }
}

// ---- the test's side -------------------------------------------------------------------

struct Link {
    input: File,
    out: File,
}

static LINK: std::sync::Mutex<Option<Link>> = std::sync::Mutex::new(None);
static KEY: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());
/// Whether the test has called the program: a verdict reached without a call is the
/// reference's (it would be the same for every program).
static CALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn locked<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A call to the program's function `name` from its stub.
pub struct Call {
    name: &'static str,
    pub out: Vec<u8>,
    reply: Reader,
}

impl Call {
    pub fn begin(index: u64, name: &'static str) -> Call {
        let mut out = Vec::new();
        put_u64(&mut out, index);
        Call { name, out, reply: Reader::new(Vec::new()) }
    }

    /// Send the call and read the reply's kind; the program's panic is raised here.
    pub fn exchange(&mut self) {
        CALLED.store(true, std::sync::atomic::Ordering::SeqCst);
        let got = {
            let mut link = locked(&LINK);
            match link.as_mut() {
                Some(link) => {
                    if send_message(&mut link.out, &self.out) {
                        receive(&mut link.input)
                    } else {
                        Ok(None)
                    }
                }
                None => Ok(None),
            }
        };
        let body = match got {
            Ok(Some(body)) => body,
            Ok(None) => conclude(false, &format!("the program ended during a call to {}", self.name), Some("early_exit")),
            Err(Broken(why)) => self.fail(why),
        };
        self.reply = Reader::new(body);
        match self.reply.byte() {
            Ok(0) => {}
            Ok(1) => {
                let text = self.get::<String>();
                self.finish();
                panic!("the program panicked in {}: {}", self.name, text);
            }
            Ok(_) => self.fail("a reply of no known kind"),
            Err(Broken(why)) => self.fail(why),
        }
    }

    pub fn get<T: Cross>(&mut self) -> T {
        match T::get(&mut self.reply) {
            Ok(value) => value,
            Err(Broken(why)) => self.fail(why),
        }
    }

    /// A `&mut [T]` argument as the program left it: of the same length.
    pub fn back_slice<T: Cross>(&mut self, target: &mut [T]) {
        let changed: Vec<T> = self.get();
        if changed.len() != target.len() {
            self.fail("a slice written back with another length");
        }
        for (slot, value) in target.iter_mut().zip(changed) {
            *slot = value;
        }
    }

    pub fn finish(&mut self) {
        if let Err(Broken(why)) = self.reply.done() {
            self.fail(why);
        }
    }

    fn fail(&self, why: &str) -> ! {
        conclude(false, &format!("the program's reply to {}: {}", self.name, why), None)
    }
}

fn json_text(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                quoted.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

fn key() -> String {
    locked(&KEY).clone()
}

/// Say how the test ended (its own output first) and end the process.
pub fn conclude(passed: bool, message: &str, flag: Option<&str>) -> ! {
    let flags = flag.map(|f| format!(", \"flags\": [\"{}\"]", f)).unwrap_or_default();
    let called = CALLED.load(std::sync::atomic::Ordering::SeqCst);
    let alone = if called { "" } else { ", \"called\": false" };
    let message: String = message.chars().take(2000).collect();
    let line = format!(
        "\n@@referee-verdict@@ {} {{\"passed\": {}, \"message\": {}{}{}}}\n",
        key(),
        passed,
        json_text(&message),
        flags,
        alone
    );
    print_verdict(&line)
}

fn print_verdict(line: &str) -> ! {
    let mut out = std::io::stdout();
    let _ = out.flush();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
    std::process::exit(0)
}

/// The test itself cannot be run as given (the reference's fault, never the program's 0).
pub fn harness_error(what: &str) -> ! {
    let line = format!(
        "\n@@referee-verdict@@ {} {{\"passed\": false, \"harness_error\": {}}}\n",
        key(),
        json_text(what)
    );
    print_verdict(&line)
}

/// The test's `std::process::exit` (rewritten to this): a verdict from the status.
pub fn exit(status: i32) -> ! {
    if status == 0 {
        conclude(true, "", None)
    }
    conclude(false, &format!("the test exited with status {}", status), None)
}

/// The verdict's key: the first line of stdin (the rest is the test's), read a byte at a
/// time from the fd, so that none of the rest is taken.
fn read_key() -> String {
    use std::os::unix::io::FromRawFd;
    // SAFETY: fd 0 is this process's stdin; the File is forgotten, never closed
    let mut stdin = unsafe { File::from_raw_fd(0) };
    let mut key = Vec::new();
    let mut byte = [0u8; 1];
    while key.len() < 64 {
        match stdin.read(&mut byte) {
            Ok(1) if byte[0] != b'\n' => key.push(byte[0]),
            _ => break,
        }
    }
    std::mem::forget(stdin);
    String::from_utf8_lossy(&key).into_owned()
}

/// Run the test's main (renamed): the verdict is printed however it ends.
pub fn run_test(test_main: fn()) -> ! {
    *locked(&KEY) = read_key();
    match (channel("REFEREE_CHANNEL_IN"), channel("REFEREE_CHANNEL_OUT")) {
        (Some(input), Some(out)) => *locked(&LINK) = Some(Link { input, out }),
        _ => harness_error("no channel to the program"),
    }
    // the test's own code starts: a process ending after this with no verdict ended in it
    let mut out = std::io::stdout();
    let _ = write!(out, "\n@@referee-verdict@@ {} {{\"started\": true}}\n", key());
    let _ = out.flush();
    match std::panic::catch_unwind(test_main) {
        Ok(()) => conclude(true, "", None),
        Err(payload) => conclude(false, &format!("the test panicked: {}", panic_text(&*payload)), None),
    }
}
