// corpus-test: test.table.java.txt
// The expected values read from a class of the test's by its name: appended to the
// program, the test's other top-level classes were the program's to name (only `Main`
// was renamed). Given a random suffix now, like the test's `Main`.
class Solution {
    int add(int a, int b) {
        for (int[] c : Cases.ALL) if (c[0] == a && c[1] == b) return c[2];
        return 0;
    }
}
