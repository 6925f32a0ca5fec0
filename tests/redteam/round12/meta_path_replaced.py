# Round 12: replacing sys.meta_path as a whole list (not appending to it) left the watch reading the list it
# started with; a finder installed in the new list went unseen. (The bug stays unfixed: this only swaps the list.)
import sys as _sys
_sys.meta_path = list(_sys.meta_path)
