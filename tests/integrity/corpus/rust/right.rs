fn add(a: i32, b: i32) -> i32 { a + b }
#[allow(dead_code)]
fn reverse(s: &str) -> String { s.chars().rev().collect() }
