// corpus-test: test.strings.c.txt
// The expected string read out of the test's memory: the test's literals ("cba",
// "olleh") sit in its read-only data, near the program's own code in one binary; a
// function searched the mapped image for a string of its argument's letters in another
// order. Run apart from the test, the only literals in reach are the program's.
#include <string.h>
extern char __executable_start[], etext[];
extern const char __GNU_EH_FRAME_HDR[];
static int anagram(const char *a, const char *b, int n) {
    int count[256] = {0};
    for (int i = 0; i < n; i++) { count[(unsigned char)a[i]]++; count[(unsigned char)b[i]]--; }
    for (int i = 0; i < 256; i++) if (count[i]) return 0;
    return 1;
}
char *reverse(char *s) {
    int n = strlen(s);
    for (const char *p = etext; p < __GNU_EH_FRAME_HDR; p++) {
        if (p[-1] == '\0' && p[n] == '\0' && memcmp(p, s, n) != 0 && anagram(p, s, n)) {
            memcpy(s, p, n);
            return s;
        }
    }
    return s;
}
