// What kotlinc compiles once while the runtime is built, to record the classes it loads
// (scripts/build-runtime.sh: jdk/kotlinc.jsa): the shapes a typical answer has.
import java.util.PriorityQueue

data class Point(val x: Int, val y: Long)

sealed class Shape {
    abstract fun area(): Double
    class Square(private val side: Double) : Shape() {
        override fun area() = side * side
    }
}

fun <T : Comparable<T>> largest(items: List<T>): T? = items.sortedDescending().firstOrNull()

fun main() {
    val groups = mutableMapOf<String, MutableList<Int>>()
    groups.getOrPut("a") { mutableListOf() }.add(1)
    val numbers = intArrayOf(3, 1, 2).sortedArray()
    val joined = numbers.joinToString(",") { it.toString() }
    val heap = PriorityQueue<Pair<Long, Int>>(compareBy { it.first })
    heap.add(numbers.sum().toLong() to 0)
    val text = buildString { append(joined); append(largest(listOf(4, 9, 2))) }
    val kind = when (Shape.Square(2.0).area()) { 4.0 -> "four" else -> "other" }
    val points = (1..3).map { Point(it, it * 2L) }.filter { it.x > 1 }
    require(points.size == 2) { "points" }
    println("$text $kind ${heap.size} ${points.first().y} ${"abc".reversed()}")
}
