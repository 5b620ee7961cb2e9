"""The ``uri-template`` format decided in linear time, as the ``uri_template`` package decides it;
no format check runs on a string over ``MAX_FORMAT_CHARS``."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
import uri_template

from bot.core.uri_templates import is_uri_template
from bot.model.schemas_python import FORMAT_CHECKER, MAX_FORMAT_CHARS
from tests.conftest import ROOT

# RFC 6570's examples (sections 1.2, 2.4, 3.2.2-3.2.9), with the package's extensions it accepts
VALID = [
    "",
    "http://example.com/~{username}/",
    "http://example.com/dictionary/{term:1}/{term}",
    "http://example.com/search{?q,lang}",
    "http://www.example.com/foo{?query,number}",
    "{var}",
    "O{empty}X",
    "{x,y}",
    "?{x,empty}",
    "{var:3}",
    "{var:30}",
    "{list*}",
    "{+var}",
    "{+base}index",
    "here?ref={+path}",
    "up{+path}{var}/here",
    "{+path:6}/here",
    "{#x,hello,y}",
    "{#path:6}/here",
    "{.who,who}",
    "www{.dom*}",
    "X{.var:3}",
    "{/var:1,var}",
    "{/list*,path:4}",
    "{;x,y,empty}",
    "{;hello:5}",
    "{?x,y,undef}",
    "{?keys*}",
    "?fixed=yes{&x}",
    "{&var:3}",
    "{count}",
    "{a%20b}",
    "{a%41}",
    "{a.b_c9}",
    "{var:999}",
    "not even a uri",  # literals are not checked
    # the package's extensions: `,` and `,+` operators, name/key, [], =default, a trailing joiner
    "{,a}",
    "{,+a}",
    "{a/b}",
    "{list[]}",
    "{a=some default}",
    "{a,}",
    "{/a/}",
    "{a=x\n}",  # the package's `.*$` allows one final line break
]
INVALID = [
    "{",
    "}",
    "{}",
    "x{y",
    "x}y",
    "{{a}}",
    "{a}}",
    "{a{b}",
    "{=var}",
    "{!var}",
    "{@var}",
    "{|var}",
    "{-var}",
    "{ var}",
    "{var }",
    "{a b}",
    "{var:0}",
    "{var:1000}",
    "{var:}",
    "{var:3*}",
    "{var**}",
    "{%zz}",
    "{a%2}",
    "{é}",
    "{+}",
    "{/}",
    "{a,,b}",
    "{a\nb}",
    "{a=x\ny}",
    "{a\n}",
    "{%41b}",  # a percent-encoded first character
    "{" * 1000,
    "{a}" + "{" * 1000,
]


@pytest.mark.parametrize("template", VALID)
def test_valid_templates(template: str) -> None:
    assert uri_template.validate(template)
    assert is_uri_template(template) and FORMAT_CHECKER.conforms(template, "uri-template")


@pytest.mark.parametrize("template", INVALID)
def test_invalid_templates(template: str) -> None:
    assert not uri_template.validate(template)
    assert not is_uri_template(template) and not FORMAT_CHECKER.conforms(template, "uri-template")


def test_the_package_and_the_linear_check_agree_on_generated_templates() -> None:
    rng = random.Random(6570)
    operators = ["", "", "+", "#", ".", "/", ";", "?", "&", ",", ",+", "=", "!", "%41", "\n"]
    names = ["a", "x.y", "a%20b", "a/b", "_1", "é", "a-b", "", "9", ".a", "a%2", "a\n"]
    modifiers = ["", "*", ":3", ":0", ":1000", "[]", "**", ":", "=d", "=x y", ":2*", "\n"]
    literals = ["", "http://x/", "a b", "}", "{", "%zz", "\n"]
    for _ in range(20_000):
        template = ""
        for _ in range(rng.randint(0, 3)):
            specs = ",".join(
                rng.choice(names) + rng.choice(modifiers) for _ in range(rng.randint(1, 3))
            )
            joiner = rng.choice(["", "", ",", ".", "/", ";", "&", "?"])
            template += f"{rng.choice(literals)}{{{rng.choice(operators)}{specs}{joiner}}}"
        assert is_uri_template(template) == uri_template.validate(template), repr(template)


# Every format on strings at the cap, and uri-template on 1,000,000 characters (the package's
# re.split took 48.7 s on 200,000 `{`), in a child process allowed 30 s of CPU: a check that is not
# linear would be killed. Each finishes in well under a second.
BOUNDED = f"""
import resource
resource.setrlimit(resource.RLIMIT_CPU, (30, 30))
from bot.core.uri_templates import is_uri_template
from bot.model.schemas_python import FORMAT_CHECKER
n = {MAX_FORMAT_CHARS}
shapes = ["{{" * n, "a" * n, "%" * n, ":" * n, "/" * n, "1" * n, "a." * (n // 2), "@" * n,
          "P" + "1" * (n - 2) + "D", "{{" + "a," * (n // 2 - 1) + "}}", "x:" + "a" * (n - 2)]
for name in sorted(FORMAT_CHECKER.checkers):
    for shape in shapes:
        FORMAT_CHECKER.conforms(shape, name)
assert not is_uri_template("{{" * 1_000_000) and is_uri_template("{{" + "a" * 1_000_000 + "}}")
print("ok")
"""


def test_every_format_check_is_bounded_on_hostile_strings() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BOUNDED], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0 and out.stdout == "ok\n", out.stderr[-2000:]


def test_a_string_over_the_cap_is_not_checked_and_not_valid() -> None:
    assert FORMAT_CHECKER.conforms("a" * MAX_FORMAT_CHARS, "uri-template")
    assert not FORMAT_CHECKER.conforms("a" * (MAX_FORMAT_CHARS + 1), "uri-template")
    assert not FORMAT_CHECKER.conforms("a@b.example" + "a" * MAX_FORMAT_CHARS, "email")
    assert FORMAT_CHECKER.conforms(["a" * (MAX_FORMAT_CHARS + 1)], "email")  # not a string
