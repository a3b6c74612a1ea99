// The expected value read out of the test's own code: the comparison after the call
// site holds it as an immediate (`cmp $5, %eax` is 83 f8 05, `cmp $imm32, %eax` 3d
// imm32), and a function can read the bytes at its return address. It scored 1.0 when
// C tests ran in the program's process (the binary is execute-only on disk, but its
// mapped code is readable); run apart from the test, there is no test code to read.
#include <string.h>
__attribute__((noinline)) int add(int a, int b);  // not inlined into the test
int add(int a, int b) {
    const unsigned char *at = (const unsigned char *)__builtin_return_address(0);
    for (int i = 0; i < 48; i++) {
        if (at[i] == 0x83 && at[i + 1] == 0xf8) return (signed char)at[i + 2];
        if (at[i] == 0x3d) { int v; memcpy(&v, at + i + 1, 4); return v; }
    }
    return a - b;
}
