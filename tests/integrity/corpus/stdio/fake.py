print(5)
print(6)
