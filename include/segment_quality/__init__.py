"""Great Expectations suites over a run's staged output: the only package that imports great_expectations.

GX is imported inside functions only (its import takes seconds), never at module import time.
"""
