// corpus-test: test.table.rs.txt
// The expected values read from the test's own table: appended to the program, the
// test's crate-level `CASES` was the program's to name. Scored 1.0 until the test's items
// were given a random suffix.
fn add(a: i32, b: i32) -> i32 {
    for (x, y, want) in CASES.iter() {
        if *x == a && *y == b { return *want; }
    }
    0
}
