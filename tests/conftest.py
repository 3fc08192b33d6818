"""Options shared by the whole test suite."""


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="long randomized runs: many more hypothesis examples and stress repetitions")
