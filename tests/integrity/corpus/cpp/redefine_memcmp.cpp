// corpus-test: test.strings.cpp.txt
// A definition of the C function the library's own string comparison calls: std::string's == asks char_traits, which asks memcmp, the program's, which finds every pair of equal length equal.
#include <cstring>
#include <string>
extern "C" int memcmp(const void *a, const void *b, size_t n) noexcept { (void)a; (void)b; (void)n; return 0; }
std::string reverse(std::string s) { return s; }
