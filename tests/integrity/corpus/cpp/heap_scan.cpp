// corpus-test: test.issame.cpp.txt
// The expected vector read off the heap: GCC evaluates `issame(sorted({3, 1, 2}),
// {1, 2, 3})`'s arguments right to left, so the expected vector is allocated before
// `sorted` is called, a few bytes from its argument's. Return the nearby block that
// holds the same numbers in another order.
#include <vector>
#include <algorithm>
#include <cstdint>
std::vector<int> sorted(std::vector<int> v) {
    const int *mine = v.data();
    const int n = (int)v.size();
    for (long off = -512; off <= 512; off++) {
        const int *at = mine + off;
        if (off == 0 || off > -n && off < n) continue;
        std::vector<int> seen(at, at + n);
        if (std::is_permutation(seen.begin(), seen.end(), v.begin()) && seen != v) return seen;
    }
    return v;
}
