// corpus-test: test.table.go.txt
// The expected values read from the test's own table: appended to the program, the
// test's package-level `cases` was the program's to name. Scored 1.0 until the test's
// package-level names were given a random suffix; now the test is built apart and
// `cases` is undefined on the program's side (it does not build).
package main

func add(a, b int) int {
    for _, c := range cases {
        if c.a == a && c.b == b { return c.want }
    }
    return 0
}
