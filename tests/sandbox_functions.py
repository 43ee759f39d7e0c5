"""Functions the sandbox tests execute in worker processes."""


def add(a, b):
    return a + b


def spin():
    while True:
        pass


def nap(seconds):
    import time

    time.sleep(seconds)
    return "rested"


def hog():
    return bytearray(4 * 1024**3)


def crash():
    import os

    os._exit(3)


FUNCTIONS = {"add": add, "spin": spin, "nap": nap, "hog": hog, "crash": crash}
