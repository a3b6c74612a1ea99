"""LeetCodeDataset's shape: helper classes (``ListNode``, ``TreeNode``) and builders in
the reference's setup, ``check(candidate)`` called with ``Solution().method``. Their
objects cross the boundary by value and are rebuilt from the receiving side's own class,
so a program cannot slip its own equality into the test's comparisons."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code.suite import parse_suite
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

SETUP = """
from typing import Optional, List
from collections import deque


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right


def list_node(values):
    head = ListNode()
    cur = head
    for v in values:
        cur.next = ListNode(v)
        cur = cur.next
    return head.next


def is_same_list(a, b):
    while a and b:
        if a.val != b.val:
            return False
        a, b = a.next, b.next
    return a is None and b is None


def tree_node(values):
    if not values:
        return None
    root = TreeNode(values[0])
    queue, i = deque([root]), 1
    while queue and i < len(values):
        node = queue.popleft()
        if i < len(values) and values[i] is not None:
            node.left = TreeNode(values[i])
            queue.append(node.left)
        i += 1
        if i < len(values) and values[i] is not None:
            node.right = TreeNode(values[i])
            queue.append(node.right)
        i += 1
    return root


def is_same_tree(p, q):
    if not p or not q:
        return p is q
    return p.val == q.val and is_same_tree(p.left, q.left) and is_same_tree(p.right, q.right)
"""


def _reference(test: str, entry_point: str) -> dict[str, Any]:
    return {"test": f"def check(candidate):\n{test}", "entry_point": entry_point, "setup": SETUP}


DEPTH = _reference(
    "    assert candidate(root=tree_node([3, 9, 20, None, None, 15, 7])) == 3\n"
    "    assert candidate(root=tree_node([])) == 0\n",
    "Solution().maxDepth",
)
REVERSE = _reference(
    "    assert is_same_list(candidate(head=list_node([1, 2, 3])), list_node([3, 2, 1]))\n"
    "    assert candidate(head=list_node([])) is None\n",
    "Solution().reverseList",
)
INVERT = _reference(
    "    want = tree_node([4, 7, 2, None, None, 3, 1])\n"
    "    assert is_same_tree(candidate(tree_node([4, 2, 7, 1, 3])), want)\n",
    "Solution().invertTree",
)
LONG = _reference(
    "    n = 10_000\n"
    "    want = list_node(range(n - 1, -1, -1))\n"
    "    assert is_same_list(candidate(head=list_node(range(n))), want)\n",
    "Solution().reverseList",
)
EQUALS = _reference(
    "    assert candidate(head=list_node([1, 2])) == list_node([2, 1])\n", "Solution().reverseList"
)

MAX_DEPTH = """
class Solution:
    def maxDepth(self, root: Optional[TreeNode]) -> int:
        if not root:
            return 0
        return 1 + max(self.maxDepth(root.left), self.maxDepth(root.right))
"""
REVERSE_LIST = """
class Solution:
    def reverseList(self, head: Optional[ListNode]) -> Optional[ListNode]:
        prev = None
        while head:
            head.next, prev, head = prev, head, head.next
        return prev
"""
INVERT_TREE = """
class Solution:
    def invertTree(self, root):
        if root:
            root.left, root.right = self.invertTree(root.right), self.invertTree(root.left)
        return root
"""
SAME_LIST_BACK = """
class Solution:
    def reverseList(self, head):
        return head
"""
ALWAYS_EQUAL_NODE = """
class ListNode:
    def __init__(self, val=0, next=None):
        self.val, self.next = val, next
    def __eq__(self, other):
        return True
    def __bool__(self):
        return False

class Solution:
    def reverseList(self, head):
        return ListNode(0)
"""
ALWAYS_EQUAL_VALUE = """
class Anything:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False

class Solution:
    def reverseList(self, head):
        return ListNode(Anything())
"""
NODES_OF_A_CLASS_IT_NAMES_SO = """
class TreeNode:  # the same name, its own class: the test still gets the setup's
    def __init__(self, val):
        self.val, self.left, self.right = val, None, None
    def __eq__(self, other):
        return True

class Solution:
    def invertTree(self, root):
        return TreeNode(4)
"""

CYCLE = _reference(
    "    head = list_node([3, 2, 0, -4])\n"
    "    tail = head.next.next.next\n"
    "    tail.next = head.next\n"
    "    assert candidate(head) is head.next  # the test's own node\n",
    "Solution().detectCycle",
)
REORDER = _reference(
    "    head = list_node([1, 2, 3, 4, 5])\n"
    "    second = head.next\n"
    "    assert candidate(head) is None\n"
    "    assert is_same_list(head, list_node([1, 5, 2, 4, 3]))\n"
    "    assert head.next.next is second  # relinked, the same nodes\n",
    "Solution().reorderList",
)
DELETE = _reference(
    "    head = list_node([4, 5, 1, 9])\n"
    "    candidate(head.next)  # only that node is given\n"
    "    assert is_same_list(head, list_node([4, 1, 9]))\n",
    "Solution().deleteNode",
)
DETECT_CYCLE = """
class Solution:
    def detectCycle(self, head):
        seen = set()
        while head and id(head) not in seen:
            seen.add(id(head))
            head = head.next
        return head
"""
A_COPY_OF_THE_NODE = """
class Solution:
    def detectCycle(self, head):
        return ListNode(head.next.val)
"""
REORDER_LIST = """
class Solution:
    def reorderList(self, head):
        nodes = []
        while head:
            nodes.append(head)
            head = head.next
        i, j = 0, len(nodes) - 1
        while i < j:
            nodes[i].next = nodes[j]
            i += 1
            if i == j:
                break
            nodes[j].next = nodes[i]
            j -= 1
        nodes[i].next = None
"""
REORDER_BY_VALUES = """
class Solution:
    def reorderList(self, head):  # the right values, but in new nodes
        values, node = [], head
        while node:
            values.append(node.val)
            node = node.next
        order = []
        while values:
            order.append(values.pop(0))
            if values:
                order.append(values.pop())
        node = head
        for v in order[1:]:
            node.next = ListNode(v)
            node = node.next
"""
DELETE_NODE = """
class Solution:
    def deleteNode(self, node):
        node.val = node.next.val
        node.next = node.next.next
"""


CASES = [
    # (name, code, reference, reward)
    ("max depth", MAX_DEPTH, DEPTH, 1.0),
    ("reverse a list", REVERSE_LIST, REVERSE, 1.0),
    ("invert a tree", INVERT_TREE, INVERT, 1.0),
    ("a list 10,000 long (past any recursion limit)", REVERSE_LIST, LONG, 1.0),
    ("the list unchanged", SAME_LIST_BACK, REVERSE, 0.0),
    ("a node that equals anything", ALWAYS_EQUAL_NODE, EQUALS, 0.0),
    ("a node that equals anything, by helper", ALWAYS_EQUAL_NODE, REVERSE, 0.0),
    ("a value that equals anything inside a node", ALWAYS_EQUAL_VALUE, REVERSE, 0.0),
    ("a class of its own named TreeNode", NODES_OF_A_CLASS_IT_NAMES_SO, INVERT, 0.0),
    ("the node where a cycle starts", DETECT_CYCLE, CYCLE, 1.0),
    ("a copy of that node", A_COPY_OF_THE_NODE, CYCLE, 0.0),
    ("a list reordered in place", REORDER_LIST, REORDER, 1.0),
    ("the values reordered in new nodes", REORDER_BY_VALUES, REORDER, 0.0),
    ("a node deleted from inside", DELETE_NODE, DELETE, 1.0),
]


@pytest.mark.parametrize(("name", "code", "reference", "reward"), CASES, ids=[c[0] for c in CASES])
def test_leetcode_items(
    score_many: ScoreMany, name: str, code: str, reference: Any, reward: float
) -> None:
    [result] = score_many([code_item(fenced(code), reference)])
    assert (result.status, result.reward) == (Status.OK, reward), result
    if reward:  # Solution() crossed as a handle, and was only called: no attempt to flag
        assert "custom_type" not in result.details.get("flags", ()), result.details


@pytest.mark.parametrize("entry_point", ["Solution().maxDepth", "maxDepth", "a.b().c"])
def test_entry_points_may_name_a_method_of_a_new_object(entry_point: str) -> None:
    assert parse_suite({**DEPTH, "entry_point": entry_point}).entry_point == entry_point


@pytest.mark.parametrize(
    "entry_point", ["Solution(1).maxDepth", "f; import os", "a.(b)", "x[0]", "Solution()()"]
)
def test_entry_points_are_no_code(entry_point: str) -> None:
    with pytest.raises(ItemInvalid, match=r"reference\.entry_point"):
        parse_suite({**DEPTH, "entry_point": entry_point})
