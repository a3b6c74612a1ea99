import time
def add(a, b):
    time.sleep(100)
