def add(a, b):
    raise AssertionError('pass')
