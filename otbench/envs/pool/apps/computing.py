"""Computing: Unicode characters (the standard library's database) and IPv4 networks."""

from __future__ import annotations

import ipaddress
import random
import unicodedata
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

_CHAR = ("character", "character", "one character")
_CIDR = ("network", "cidr", "an IPv4 network in CIDR form, such as 10.0.0.0/8")
_ADDRESS = ("address", "ip_address", "an IPv4 address")


def _char(value: Any) -> str:
    text = check.string(value, "character")
    if len(text) != 1:
        raise ValueError(f"'character' must be exactly one character, got {value!r}")
    return text


def character_name(character: str) -> str:
    name = unicodedata.name(_char(character), "")
    if not name:
        raise LookupError(f"'character' {character!r} has no Unicode name")
    return name


def character_from_name(name: str) -> str:
    try:
        return unicodedata.lookup(check.non_empty_string(name, "name"))
    except KeyError:
        raise LookupError(f"'name': no Unicode character is called {name!r}") from None


def code_point(character: str) -> str:
    return f"U+{ord(_char(character)):04X}"


def character_at(code: str) -> str:
    text = check.non_empty_string(code, "code").upper().removeprefix("U+")
    try:
        return chr(int(text, 16))
    except (ValueError, OverflowError):
        raise ValueError(f"'code' must be a code point such as U+00E9, got {code!r}") from None


def character_category(character: str) -> str:
    return unicodedata.category(_char(character))


def utf8_length(text: str) -> int:
    return len(check.string(text, "text").encode("utf-8"))


def utf8_bytes(character: str) -> str:
    return _char(character).encode("utf-8").hex(" ").upper()


def strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", check.string(text, "text"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _network(value: Any) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(check.non_empty_string(value, "network"), strict=False)
    except ValueError:
        raise ValueError(f"'network' must be an IPv4 network such as 10.0.0.0/8, got {value!r}") from None


def _address(value: Any, name: str = "address") -> ipaddress.IPv4Address:
    try:
        return ipaddress.IPv4Address(check.non_empty_string(value, name))
    except ValueError:
        raise ValueError(f"'{name}' must be an IPv4 address such as 192.168.1.10, got {value!r}") from None


def network_address(network: str) -> str:
    return str(_network(network).network_address)


def broadcast_address(network: str) -> str:
    return str(_network(network).broadcast_address)


def usable_hosts(network: str) -> int:
    size = _network(network).num_addresses
    return max(size - 2, 0) if size > 2 else size


def netmask(network: str) -> str:
    return str(_network(network).netmask)


def address_in_network(address: str, network: str) -> bool:
    return _address(address) in _network(network)


def address_as_integer(address: str) -> int:
    return int(_address(address))


def is_private_address(address: str) -> bool:
    return _address(address).is_private


def reverse_dns_name(address: str) -> str:
    return _address(address).reverse_pointer


def _network_draw(rng: random.Random) -> dict[str, Any]:
    prefix = rng.randint(8, 30)
    address = ipaddress.IPv4Address(rng.randrange(1 << 32))
    return {"network": str(ipaddress.IPv4Network(f"{address}/{prefix}", strict=False))}


def _membership(rng: random.Random) -> dict[str, Any]:
    network = ipaddress.IPv4Network(_network_draw(rng)["network"])
    inside = network.network_address + rng.randrange(network.num_addresses)
    address = inside if rng.random() < 0.5 else ipaddress.IPv4Address(rng.randrange(1 << 32))
    return {"address": str(address), "network": str(network)}


def _private(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.5:
        return {"address": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"}
    return {"address": ".".join(str(rng.randint(1, 223)) for _ in range(4))}


TOOLS: list[ToolSpec] = [
    tool("unicode", "character_name", character_name, "The Unicode name of a character.", [_CHAR], "label",
         "the Unicode name of {character}"),
    tool("unicode", "character_from_name", character_from_name, "The character with a given Unicode name.",
         [("name", "unicode_name", "the character's Unicode name")], "character", "the character named {name}",
         refers="{name}"),
    tool("unicode", "code_point", code_point, "The code point of a character, as U+XXXX.", [_CHAR], "code_point",
         "the code point of {character}", refers="{character}"),
    tool("unicode", "character_at", character_at, "The character at a code point given as U+XXXX.",
         [("code", "code_point", "the code point, such as U+00E9")], "character", "the character at {code}",
         refers="{code}"),
    tool("unicode", "character_category", character_category, "The Unicode general category of a character (Lu, "
         "Ll, Nd...).", [_CHAR], "label", "the Unicode category of {character}"),
    tool("unicode", "utf8_length", utf8_length, "How many bytes a text takes in UTF-8.",
         [("text", "text", "the text")], "count", "the number of UTF-8 bytes in {text}"),
    tool("unicode", "utf8_bytes", utf8_bytes, "The UTF-8 bytes of a character in hexadecimal, separated by spaces.",
         [_CHAR], "label", "the UTF-8 bytes of {character}"),
    tool("unicode", "strip_accents", strip_accents, "A text with its accents and other combining marks removed.",
         [("text", "accented", "the text")], "text", "{text} without accents"),
    tool("ip_networks", "network_address", network_address, "The network address of an IPv4 network.", [_CIDR],
         "label", "the network address of {network}", draw=_network_draw),
    tool("ip_networks", "broadcast_address", broadcast_address, "The broadcast address of an IPv4 network.", [_CIDR],
         "label", "the broadcast address of {network}", draw=_network_draw),
    tool("ip_networks", "usable_hosts", usable_hosts, "How many host addresses an IPv4 network has (all but the "
         "network and broadcast addresses).", [_CIDR], "count", "the number of usable host addresses in {network}",
         draw=_network_draw),
    tool("ip_networks", "netmask", netmask, "The netmask of an IPv4 network, dotted.", [_CIDR], "label",
         "the netmask of {network}", draw=_network_draw),
    tool("ip_networks", "address_in_network", address_in_network, "Whether an IPv4 address belongs to a network.",
         [_ADDRESS, _CIDR], "flag", "whether {address} is in {network}", draw=_membership),
    tool("ip_networks", "address_as_integer", address_as_integer, "An IPv4 address as an unsigned 32-bit integer.",
         [_ADDRESS], "integer", "{address} as a 32-bit integer"),
    tool("ip_networks", "is_private_address", is_private_address, "Whether an IPv4 address is in a private or "
         "reserved range.", [_ADDRESS], "flag", "whether {address} is a private address", draw=_private),
    tool("ip_networks", "reverse_dns_name", reverse_dns_name, "The reverse DNS (PTR) name of an IPv4 address.",
         [_ADDRESS], "label", "the reverse DNS name of {address}"),
]
