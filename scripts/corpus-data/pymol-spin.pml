# What PyMOL shows in the corpus: a peptide built from its sequence, as a cartoon with
# its side chains as sticks and a translucent surface, turning.
python
from pymol import cmd, util
cmd.fab("ACDEFGHIKLMNPQRSTVWY", "pep", ss=1)
cmd.show("cartoon")
cmd.show("sticks", "sidechain")
cmd.show("surface")
cmd.set("transparency", 0.5)
cmd.orient()
cmd.mset("1 x360")
util.mroll(1, 360, 1)
cmd.mplay()
python end
