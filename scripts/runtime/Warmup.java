// What javac compiles once while the runtime is built, to record the classes it loads
// (scripts/build-runtime.sh: jdk/javac.jsa): the shapes a typical answer has.
import java.util.*;
import java.util.function.*;
import java.util.stream.*;

public class Warmup {
    record Point(int x, long y) {}

    interface Shape { double area(); }

    static final class Square implements Shape {
        private final double side;
        Square(double side) { this.side = side; }
        public double area() { return side * side; }
    }

    enum Color { RED, GREEN }

    static <T extends Comparable<T>> T largest(List<T> items) {
        return items.stream().max(Comparator.naturalOrder()).orElseThrow();
    }

    static String name(Color color) {
        switch (color) {
            case RED: return "red";
            default: return "other";
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, List<Integer>> groups = new HashMap<>();
        groups.computeIfAbsent("a", k -> new ArrayList<>()).add(1);
        int[] numbers = {3, 1, 2};
        Arrays.sort(numbers);
        long total = IntStream.of(numbers).asLongStream().sum();
        String joined = Arrays.stream(numbers).mapToObj(Integer::toString).collect(Collectors.joining(","));
        Deque<Point> queue = new ArrayDeque<>(List.of(new Point(1, 2L)));
        PriorityQueue<long[]> heap = new PriorityQueue<>((p, q) -> Long.compare(p[0], q[0]));
        heap.add(new long[] {total, 0});
        BiFunction<Integer, Integer, Integer> add = Integer::sum;
        Optional<String> first = Stream.of("x", "y").filter(s -> !s.isEmpty()).findFirst();
        StringBuilder out = new StringBuilder(joined);
        try {
            out.append(largest(Arrays.asList(4, 9, 2))).append(name(Color.RED));
        } catch (RuntimeException e) {
            throw new IllegalStateException(e);
        }
        Shape shape = new Square(2.0);
        assert shape.area() == 4.0 : "area";
        System.out.println(out + " " + queue.size() + heap.size() + add.apply(1, 2) + first.get());
    }
}
