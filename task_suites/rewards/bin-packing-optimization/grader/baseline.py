import sys

capacity, count = map(int, sys.stdin.readline().split())
for index in range(count):
    print(index)
