"""The boundary between a Python program and its assert tests: two sandboxes, plain values.

`codec` (the values that cross), `server` (the program's side), `tester` (the tests'
side), `assembly` (the host: builds both programs, reads the verdict).
"""
