# A04: a zero turned into infra_error. The judged process lifts the int-to-str limit
# (sys.set_int_max_str_digits(0), not audited) and sets session.exitstatus to a 6000-digit int in a
# config cleanup (after the tests, before pytest.main returns). pytest.main returns it (ExitCode() refuses
# it), the runner passes int(code) to the policy, whose record is then written with a 6000-digit
# exit_code; the host's json.loads raises a plain ValueError (not JSONDecodeError) in _read_record.
import sys as _s

_s.set_int_max_str_digits(0)
for _finder in _s.meta_path:
    _cfg = getattr(_finder, "config", None)
    if _cfg is not None:
        _session = _cfg.pluginmanager.get_plugin("session")
        _cfg.add_cleanup(lambda: setattr(_session, "exitstatus", 10 ** 6000))
        break
