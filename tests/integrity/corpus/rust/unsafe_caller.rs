// Unsafe code in the program: with it, a program could call the test by address and catch its panics.
fn add(a: i32, b: i32) -> i32 { unsafe { std::ptr::read(&a) + b } }
