"""Colours written as ``#rrggbb``: channels, colour spaces, contrast, mixing and names."""

from __future__ import annotations

import colorsys
import random
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_HEX = ("color", "hex_color", "a colour as #rrggbb")
_BASIC = {"black": "#000000", "silver": "#c0c0c0", "gray": "#808080", "white": "#ffffff", "maroon": "#800000",
          "red": "#ff0000", "purple": "#800080", "fuchsia": "#ff00ff", "green": "#008000", "lime": "#00ff00",
          "olive": "#808000", "yellow": "#ffff00", "navy": "#000080", "blue": "#0000ff", "teal": "#008080",
          "aqua": "#00ffff"}


def _rgb(value: Any, name: str = "color") -> tuple[int, int, int]:
    text = check.non_empty_string(value, name).lstrip("#")
    if len(text) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in text):
        raise ValueError(f"'{name}' must be a colour as #rrggbb, got {value!r}")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def _hex(red: float, green: float, blue: float) -> str:
    return "#" + "".join(f"{max(0, min(255, round(channel))):02x}" for channel in (red, green, blue))


def _channel(value: Any, name: str) -> int:
    number = check.integer(value, name)
    if not 0 <= number <= 255:
        raise ValueError(f"'{name}' must be between 0 and 255, got {number}")
    return number


def _luminance(rgb: tuple[int, int, int]) -> float:
    def linear(channel: int) -> float:
        share = channel / 255
        return share / 12.92 if share <= 0.04045 else ((share + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def rgb_to_hex(red: int, green: int, blue: int) -> str:
    return _hex(_channel(red, "red"), _channel(green, "green"), _channel(blue, "blue"))


def hex_to_rgb(color: str) -> str:
    return ", ".join(str(channel) for channel in _rgb(color))


def hex_to_hsl(color: str) -> str:
    hue, light, saturation = colorsys.rgb_to_hls(*(c / 255 for c in _rgb(color)))
    return f"{round(hue * 360) % 360}, {round(saturation * 100)}%, {round(light * 100)}%"


def hsl_to_hex(hue: int, saturation: int, lightness: int) -> str:
    h = check.integer(hue, "hue") % 360 / 360
    s, ell = check.number(saturation, "saturation") / 100, check.number(lightness, "lightness") / 100
    return _hex(*(255 * c for c in colorsys.hls_to_rgb(h, ell, s)))


def relative_luminance(color: str) -> float:
    return round(_luminance(_rgb(color)), 4)


def contrast_ratio(first: str, second: str) -> float:
    lighter, darker = sorted((_luminance(_rgb(first, "first")), _luminance(_rgb(second, "second"))), reverse=True)
    return round((lighter + 0.05) / (darker + 0.05), 2)


def complement(color: str) -> str:
    hue, light, saturation = colorsys.rgb_to_hls(*(c / 255 for c in _rgb(color)))
    return _hex(*(255 * c for c in colorsys.hls_to_rgb((hue + 0.5) % 1, light, saturation)))


def invert(color: str) -> str:
    return _hex(*(255 - c for c in _rgb(color)))


def grayscale(color: str) -> str:
    red, green, blue = _rgb(color)
    level = 0.299 * red + 0.587 * green + 0.114 * blue
    return _hex(level, level, level)


def mix(first: str, second: str) -> str:
    a, b = _rgb(first, "first"), _rgb(second, "second")
    return _hex(*((x + y) / 2 for x, y in zip(a, b, strict=True)))


def lighten(color: str, amount: int) -> str:
    share = check.number(amount, "amount") / 100
    return _hex(*(c + (255 - c) * share for c in _rgb(color)))


def darken(color: str, amount: int) -> str:
    share = check.number(amount, "amount") / 100
    return _hex(*(c * (1 - share) for c in _rgb(color)))


def nearest_basic_colour(color: str) -> str:
    rgb = _rgb(color)
    return min(_BASIC, key=lambda name: (sum((a - b) ** 2 for a, b in zip(rgb, _rgb(_BASIC[name]), strict=True)), name))


def _two(rng: random.Random) -> dict[str, Any]:
    return {"first": f"#{rng.randrange(1 << 24):06x}", "second": f"#{rng.randrange(1 << 24):06x}"}


def _hsl(rng: random.Random) -> dict[str, Any]:
    return {"hue": rng.randint(0, 359), "saturation": rng.randint(10, 100), "lightness": rng.randint(10, 90)}


_TWO = (("first", "hex_color", "the first colour as #rrggbb"), ("second", "hex_color", ("the second colour as "
                                                                                       "#rrggbb")))
_AMOUNT = ("amount", "share", "how far to go, in percent")

TOOLS: list[ToolSpec] = [
    tool("colors", "rgb_to_hex", rgb_to_hex, "The #rrggbb form of a colour given by its red, green and blue channels "
         "(0 to 255).", [("red", "channel", "the red channel, 0 to 255"), ("green", "channel", "the green channel"),
                         ("blue", "channel", "the blue channel")], "hex_color",
         "the hex code of the colour with red {red}, green {green} and blue {blue}",
         refers="the colour with red {red}, green {green} and blue {blue}"),
    tool("colors", "hex_to_rgb", hex_to_rgb, "The red, green and blue channels of a #rrggbb colour, as 'r, g, b'.",
         [_HEX], "label", "the RGB channels of {color}"),
    tool("colors", "hex_to_hsl", hex_to_hsl, "A #rrggbb colour as hue, saturation and lightness ('h, s%, l%').",
         [_HEX], "label", "the HSL values of {color}"),
    tool("colors", "hsl_to_hex", hsl_to_hex, "The #rrggbb form of a colour given by hue (degrees), saturation and "
         "lightness (percent).", [("hue", "hue", "the hue in degrees"), ("saturation", "share", ("the saturation in "
                                                                             "percent")),
                                  ("lightness", "share", "the lightness in percent")], "hex_color",
         "the hex code of the colour with hue {hue}, saturation {saturation} and lightness {lightness}",
         refers="the colour with hue {hue}, saturation {saturation} and lightness {lightness}", draw=_hsl),
    tool("colors", "relative_luminance", relative_luminance, "The WCAG relative luminance of a colour, 0 (black) to "
         "1 (white).", [_HEX], "amount", "the relative luminance of {color}"),
    tool("colors", "contrast_ratio", contrast_ratio, "The WCAG contrast ratio of two colours (1 to 21).", _TWO,
         "amount", "the contrast ratio of {first} and {second}", draw=_two),
    tool("colors", "complement", complement, "The complementary colour (hue turned by 180 degrees).", [_HEX],
         "hex_color", "the hex code of the complement of {color}", refers="the complement of {color}"),
    tool("colors", "invert", invert, "The inverted colour (each channel 255 minus itself).", [_HEX], "hex_color",
         "the hex code of the inverse of {color}", refers="the inverse of {color}"),
    tool("colors", "grayscale", grayscale, "The grey of the same perceived brightness (ITU-R 601 weights).", [_HEX],
         "hex_color", "the hex code of the grey matching {color}", refers="the grey matching {color}"),
    tool("colors", "mix", mix, "The colour halfway between two colours (each channel averaged).", _TWO, "hex_color",
         "the hex code of an even mix of {first} and {second}", refers="an even mix of {first} and {second}",
         draw=_two),
    tool("colors", "lighten", lighten, "A colour moved towards white by a percentage.", [_HEX, _AMOUNT], "hex_color",
         "the hex code of {color} lightened by {amount}", refers="{color} lightened by {amount}"),
    tool("colors", "darken", darken, "A colour moved towards black by a percentage.", [_HEX, _AMOUNT], "hex_color",
         "the hex code of {color} darkened by {amount}", refers="{color} darkened by {amount}"),
    tool("colors", "nearest_basic_colour", nearest_basic_colour, "The name of the nearest of the 16 basic HTML "
         "colours.", [_HEX], "label", "the nearest basic HTML colour to {color}"),
]
