"""``match_name``: a kernel name as the CSV pages (and the .ncu-rep line tables) agree on it.

The source page and the .ncu-rep spell template values with C-style casts
('poly_chain<(int)64>', 'k<(Foo::Bar)3>'), the raw page without ('poly_chain<64>'): the casts
and all whitespace go, anything else stays. ``_normalised`` (line-table matching) spells names
the same way.
"""

from __future__ import annotations

import pytest

from drgpu_py.readers.ncu_csv import _normalised, match_name

CASTS = [
    ("k<(Foo::Bar)3>", "k<3>"),
    ("k<(int)5>", "k<5>"),
    ("k<(unsigned long)7>", "k<7>"),
    ("(int)5", "5"),
    ("(unsigned long)7", "7"),
    ("(Foo::Bar)3", "3"),
    ("k<(long long)-1>", "k<-1>"),
    ("k<(signed char)65>", "k<65>"),
    ("k<(bool)0,(Color)2,(ns::Mode)1>", "k<0,2,1>"),
    ("ns::k<(unsigned int)32,(a::b::E)0>", "ns::k<32,0>"),
    ("void poly_chain<(int)64>(const float *, float *, int)", "voidpoly_chain<64>(constfloat*,float*,int)"),
]

# No cast in these (and no whitespace): they come back as they are. A parenthesised type not
# followed by a value is a parameter list, not a cast.
UNCHANGED = [
    "saxpy",
    "k<3>",
    "k<64,true>",
    "ns::k<Foo::Bar>",
    "k<-1>",
    "f(int)",
    "f(unsigned)",
    "k<3>(int)",
    "voidk<Foo::Bar>(constfloat*,float*)",
    "(anonymousnamespace)::relax<0>(float*)",
    "",
]


@pytest.mark.parametrize(("name", "want"), CASTS)
def test_casts_in_template_values_go(name, want):
    assert match_name(name) == want


@pytest.mark.parametrize("name", UNCHANGED)
def test_names_without_casts_come_back_unchanged(name):
    assert match_name(name) == name


def test_whitespace_goes():
    assert match_name(" void  saxpy(float, const float *, float *) ") == "voidsaxpy(float,constfloat*,float*)"


def test_both_pages_spellings_agree():
    assert match_name("void k<(Foo::Bar)3, (unsigned long)7>(int)") == match_name("void k<3, 7>(int)")


@pytest.mark.parametrize(("name", "want"), [*CASTS, *((n, n) for n in UNCHANGED)])
def test_line_table_matching_spells_names_the_same(name, want):
    assert _normalised(name) == want == match_name(name)
