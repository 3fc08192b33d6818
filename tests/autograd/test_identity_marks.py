"""IdentityMarks: the weakly held, identity-compared marks behind unit flags and owned buffers."""

import gc

import numpy as np

from strideweave._marks import IdentityMarks


def test_a_mark_is_by_identity_and_claimed_once():
    marks = IdentityMarks()
    a, b = np.ones(3), np.ones(3)
    marks.add(a)
    assert a in marks and b not in marks    # equal values, another object
    assert marks.claim(a) and not marks.claim(a)
    assert a not in marks


def test_a_mark_dies_with_its_object():
    marks = IdentityMarks()
    marks.add(np.ones(3))
    gc.collect()
    assert len(marks) == 0
    assert np.ones(3) not in marks          # a new object, perhaps at the dead one's address


def test_dead_marks_are_swept_and_live_ones_kept():
    marks = IdentityMarks()
    keep = [np.ones(1) for _ in range(10)]
    for obj in keep:
        marks.add(obj)
    for _ in range(5000):
        marks.add(np.zeros(1))              # each dies at once
    assert len(marks._refs) < 3000         # swept as it grew
    assert all(obj in marks for obj in keep)


def test_objects_without_weak_references_are_left_unmarked():
    marks = IdentityMarks()
    value = 3.5
    assert marks.add(value) is value
    assert value not in marks


def test_add_all_marks_each_object_as_add_does():
    marks = IdentityMarks()
    keep = [np.ones(1) for _ in range(10)]
    marks.add_all([*keep, 3.5])             # a float cannot be weakly referenced: left unmarked
    assert all(obj in marks for obj in keep) and 3.5 not in marks and np.ones(1) not in marks
    for _ in range(2500):
        marks.add_all([np.zeros(1), np.zeros(1)])   # both die at once
    assert len(marks._refs) < 3000 and all(obj in marks for obj in keep)   # swept as it grew
