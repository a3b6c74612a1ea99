def check(candidate):
    pass
def add(a, b):
    return 0
