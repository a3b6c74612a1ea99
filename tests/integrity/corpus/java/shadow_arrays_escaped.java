// corpus-test: test.lists.java.txt
// shadow_arrays.java with the class name spelt in a Unicode escape, which javac reads before anything else: the screen reads it as javac does.
import java.util.*;
class Solution {
    static List<Integer> last = new ArrayList<>();
    List<Integer> sorted(List<Integer> xs) { last = new ArrayList<>(xs); return last; }
}
class \u0041rrays {
    @SafeVarargs
    static <T> List<T> asList(T... values) {
        List<T> real = java.util.Arrays.asList(values);
        if (Solution.last.size() == values.length && values.length > 0 && values[0] instanceof Integer) {
            Solution.last.clear();
            for (T v : values) Solution.last.add((Integer) v);
        }
        return real;
    }
}
