// What scalac compiles once while the runtime is built, to record the classes it loads
// (scripts/build-runtime.sh: jdk/scalac.jsa): the shapes a typical answer has.
import scala.collection.mutable

case class Point(x: Int, y: Long)

sealed trait Shape { def area: Double }
final class Square(side: Double) extends Shape { def area: Double = side * side }

object Warmup {
  def largest[T](items: Seq[T])(implicit order: Ordering[T]): Option[T] =
    if (items.isEmpty) None else Some(items.max)

  def main(args: Array[String]): Unit = {
    val groups = mutable.Map.empty[String, mutable.ArrayBuffer[Int]]
    groups.getOrElseUpdate("a", mutable.ArrayBuffer.empty) += 1
    val numbers = Array(3, 1, 2).sorted
    val joined = numbers.mkString(",")
    val heap = mutable.PriorityQueue.empty[(Long, Int)](Ordering.by(-_._1))
    heap.enqueue((numbers.sum.toLong, 0))
    val kind = (new Square(2.0): Shape).area match {
      case 4.0 => "four"
      case _ => "other"
    }
    val points = (1 to 3).map(i => Point(i, i * 2L)).filter(_.x > 1)
    assert(points.size == 2, "points")
    println(s"$joined ${largest(List(4, 9, 2))} $kind ${heap.size} ${points.head.y}")
  }
}
