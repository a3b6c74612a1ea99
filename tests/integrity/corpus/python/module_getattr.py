def __getattr__(name):
    return lambda *a: 5
