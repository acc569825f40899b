"""pyir.arith: the one symbolic-arithmetic core.

- `simplify(expr, ranges)` / `Analyzer.simplify`: canonical, simplified expressions;
  `negated_comparison`: where an integer comparison fails;
- `Analyzer`: facts about variables (`bind`, `scope`) and questions under them
  (`const_int_bound`, `symbolic_bound`, `can_prove`, `can_prove_equal`);
- `relax_region`: the region an access covers while some variables run over their ranges;
- `detect_linear`: ``expr == coeff * var + rest``; `non_decreasing`: whether ``expr`` never
  decreases as a variable grows; `known_multiple`: what ``expr`` is always a multiple of;
- `detect_iter_map`: whether block bindings are a bijective affine map of the loops;
- `tiles_apart`: whether the boxes loop iterations touch are disjoint (or the same);
- `clear_cache`: forget the answers analyzers share (to measure cold work).

Modules: `canonical` (polynomial form), `bounds` (constant intervals), `simplify` (the
rewrite rules), `analyzer` (facts, symbolic bounds, proofs), `region`, `iter_map`, `tiles`.
"""

from .analyzer import Analyzer, clear_cache, simplify, vars_of
from .bounds import IntBound
from .canonical import known_multiple
from .iter_map import IterMap, detect_iter_map
from .region import detect_linear, non_decreasing, relax_region
from .simplify import negated_comparison
from .tiles import tiles_apart

__all__ = ["Analyzer", "IntBound", "IterMap", "clear_cache", "detect_iter_map", "detect_linear",
           "known_multiple", "negated_comparison", "non_decreasing", "relax_region", "simplify",
           "tiles_apart", "vars_of"]
