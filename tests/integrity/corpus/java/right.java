import java.util.*;
class Solution {
    int add(int a, int b) { return a + b; }
    List<Integer> sorted(List<Integer> xs) { List<Integer> out = new ArrayList<>(xs); Collections.sort(out); return out; }
}
