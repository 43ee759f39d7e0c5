"""Text: letter case, counts, rewrites, classic ciphers, encodings, hashes and comparisons of two strings."""

from __future__ import annotations

import base64
import hashlib
import random
import re
import string
import urllib.parse
import zlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from otbench.envs.bfcl.functions import _checks as check
from otbench.envs.pool.spec import ToolSpec, tool

# The texts and words requests are drawn from (kinds of values draw from them too: otbench.envs.pool.kinds)
PHRASES = ("Hello World", "the quick brown fox", "Open the pod bay doors", "Data is the new oil",
           "Keep calm and carry on", "A stitch in time saves nine", "To be or not to be", "Practice makes perfect",
           "Knowledge is power", "Actions speak louder than words", "Better late than never", "Time flies",
           "All that glitters is not gold", "Fortune favours the bold", "Rome was not built in a day",
           "Every cloud has a silver lining", "Good things come to those who wait", "Less is more",
           "Curiosity killed the cat", "Two heads are better than one", "The early bird catches the worm",
           "Beauty is in the eye of the beholder", "Honesty is the best policy", "When in Rome",
           "Measure twice cut once", "Look before you leap", "Still waters run deep", "Haste makes waste",
           "Silence is golden", "Laughter is the best medicine", "Where there is smoke there is fire",
           "Hope for the best", "Strike while the iron is hot", "The pen is mightier than the sword",
           "Blood is thicker than water", "Great minds think alike", "Birds of a feather flock together",
           "Practice what you preach", "Seeing is believing", "Variety is the spice of life")
WORDS = ("level", "banana", "rhythm", "kayak", "planet", "orange", "racecar", "library", "mountain", "whisper",
         "galaxy", "teacher", "listen", "silent", "python", "harbour", "window", "journey", "puzzle", "lantern",
         "crystal", "meadow", "thunder", "elephant", "compass", "volcano", "garden", "bicycle", "castle", "horizon",
         "noon", "radar", "stats", "pepper", "balloon", "mississippi", "committee", "bookkeeper", "coffee", "zebra")

_TEXT = ("text", "text", "the text")
_TWO = (("first", "text", "the first text"), ("second", "text", "the second text"))
_MORSE = {"a": ".-", "b": "-...", "c": "-.-.", "d": "-..", "e": ".", "f": "..-.", "g": "--.", "h": "....",
          "i": "..", "j": ".---", "k": "-.-", "l": ".-..", "m": "--", "n": "-.", "o": "---", "p": ".--.",
          "q": "--.-", "r": ".-.", "s": "...", "t": "-", "u": "..-", "v": "...-", "w": ".--", "x": "-..-",
          "y": "-.--", "z": "--..", "0": "-----", "1": ".----", "2": "..---", "3": "...--", "4": "....-",
          "5": ".....", "6": "-....", "7": "--...", "8": "---..", "9": "----."}
_NATO = ("Alfa", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett", "Kilo", "Lima",
         "Mike", "November", "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango", "Uniform", "Victor", "Whiskey",
         "X-ray", "Yankee", "Zulu")
_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7", "A": "4", "E": "3", "I": "1",
                       "O": "0", "S": "5", "T": "7"})
_VOWELS = set("aeiouAEIOU")


def _text(value: Any, name: str = "text") -> str:
    return check.string(value, name)


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9']+", text)


def _on_text(operation: Callable[[str], Any]) -> Callable[[str], Any]:
    def apply(text: str) -> Any:
        return operation(_text(text))

    return apply


def _shift_letters(text: str, shift: int) -> str:
    def move(ch: str) -> str:
        if ch in string.ascii_lowercase:
            return chr((ord(ch) - 97 + shift) % 26 + 97)
        if ch in string.ascii_uppercase:
            return chr((ord(ch) - 65 + shift) % 26 + 65)
        return ch

    return "".join(move(ch) for ch in text)


def caesar_encrypt(text: str, shift: int) -> str:
    return _shift_letters(_text(text), check.integer(shift, "shift"))


def caesar_decrypt(text: str, shift: int) -> str:
    return _shift_letters(_text(text), -check.integer(shift, "shift"))


def _vigenere(text: str, key: str, sign: int) -> str:
    letters = [ord(ch) - 65 for ch in check.non_empty_string(key, "key").upper() if ch.isalpha()]
    if not letters:
        raise ValueError("'key' must contain letters")
    out, position = [], 0
    for ch in _text(text):
        if ch.isalpha() and ch.isascii():
            out.append(_shift_letters(ch, sign * letters[position % len(letters)]))
            position += 1
        else:
            out.append(ch)
    return "".join(out)


def vigenere_encrypt(text: str, key: str) -> str:
    return _vigenere(text, key, 1)


def vigenere_decrypt(text: str, key: str) -> str:
    return _vigenere(text, key, -1)


def atbash(text: str) -> str:
    table = str.maketrans(string.ascii_lowercase + string.ascii_uppercase,
                          string.ascii_lowercase[::-1] + string.ascii_uppercase[::-1])
    return _text(text).translate(table)


def to_morse(text: str) -> str:
    words = _text(text).lower().split()
    return " / ".join(" ".join(_MORSE[ch] for ch in word if ch in _MORSE) for word in words)


def from_morse(code: str) -> str:
    letters = {value: key for key, value in _MORSE.items()}
    words = []
    for word in check.non_empty_string(code, "code").split("/"):
        try:
            words.append("".join(letters[symbol] for symbol in word.split()))
        except KeyError as missing:
            raise ValueError(f"'code' holds a symbol that is no Morse letter: {missing}") from None
    return " ".join(words)


def nato_spelling(text: str) -> str:
    return " ".join(_NATO[ord(ch) - 97] for ch in _text(text).lower() if "a" <= ch <= "z")


def pig_latin(text: str) -> str:
    def convert(word: str) -> str:
        lower = word.lower()
        first_vowel = next((i for i, ch in enumerate(lower) if ch in "aeiou"), len(word))
        return lower + "way" if first_vowel == 0 else lower[first_vowel:] + lower[:first_vowel] + "ay"

    return " ".join(convert(word) for word in _text(text).split())


def rail_fence(text: str, rails: int) -> str:
    count = check.integer(rails, "rails")
    if not 2 <= count <= 100:
        raise ValueError(f"'rails' must be between 2 and 100, got {count}")
    rows: list[list[str]] = [[] for _ in range(count)]
    row, step = 0, 1
    for ch in _text(text):
        rows[row].append(ch)
        if row in (0, count - 1):
            step = 1 if row == 0 else -1
        row += step
    return "".join("".join(r) for r in rows)


def _snake(text: str) -> str:
    return "_".join(word.lower() for word in _words(text))


def _camel(text: str) -> str:
    words = _words(text)
    return (words[0].lower() + "".join(w.capitalize() for w in words[1:])) if words else ""


def _alternating(text: str) -> str:
    return "".join(ch.upper() if i % 2 else ch.lower() for i, ch in enumerate(text))


def _sentence(text: str) -> str:
    lowered = text.lower()
    return lowered[:1].upper() + lowered[1:]


def _levenshtein(first: str, second: str) -> int:
    row = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        previous, row[0] = row[0], i
        for j, b in enumerate(second, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (a != b))
    return row[-1]


def _lcs(first: str, second: str) -> int:
    row = [0] * (len(second) + 1)
    for a in first:
        diagonal = 0
        for j, b in enumerate(second, 1):
            diagonal, row[j] = row[j], diagonal + 1 if a == b else max(row[j], row[j - 1])
    return row[-1]


def _pair(operation: Callable[[str, str], Any]) -> Callable[[str, str], Any]:
    def compare(first: str, second: str) -> Any:
        return operation(_text(first, "first"), _text(second, "second"))

    return compare


def hamming_distance(first: str, second: str) -> int:
    a, b = _text(first, "first"), _text(second, "second")
    if len(a) != len(b):
        raise ValueError(f"'first' and 'second' must be equally long, got {len(a)} and {len(b)} characters")
    return sum(x != y for x, y in zip(a, b, strict=True))


def _jaccard(first: str, second: str) -> float:
    a, b = {w.lower() for w in _words(first)}, {w.lower() for w in _words(second)}
    return round(len(a & b) / len(a | b), 4) if a | b else 1.0


def _letters(text: str) -> str:
    return "".join(sorted(ch for ch in text.lower() if ch.isalnum()))


def _common_prefix(first: str, second: str) -> str:
    size = 0
    while size < min(len(first), len(second)) and first[size] == second[size]:
        size += 1
    return first[:size]


def is_palindrome(text: str) -> bool:
    cleaned = "".join(ch for ch in _text(text).lower() if ch.isalnum())
    return cleaned == cleaned[::-1]


def soundex(word: str) -> str:
    letters = [ch for ch in check.non_empty_string(word, "word").upper() if ch.isalpha()]
    if not letters:
        raise ValueError("'word' must contain letters")
    codes = {**dict.fromkeys("BFPV", "1"), **dict.fromkeys("CGJKQSXZ", "2"), **dict.fromkeys("DT", "3"), "L": "4",
             **dict.fromkeys("MN", "5"), "R": "6"}
    result, last = letters[0], codes.get(letters[0], "")
    for ch in letters[1:]:
        code = codes.get(ch, "")
        if code and code != last:
            result += code
        if ch not in "HW":
            last = code
    return (result + "000")[:4]


def count_letter(text: str, letter: str) -> int:
    wanted = check.non_empty_string(letter, "letter").lower()
    if len(wanted) != 1:
        raise ValueError(f"'letter' must be one character, got {letter!r}")
    return _text(text).lower().count(wanted)


def count_substring(text: str, part: str) -> int:
    return _text(text).lower().count(check.non_empty_string(part, "part").lower())


def truncate_words(text: str, count: int) -> str:
    return " ".join(_text(text).split()[: check.non_negative_integer(count, "count")])


def _hash(algorithm: str) -> Callable[[str], str]:
    def digest(text: str) -> str:
        return hashlib.new(algorithm, _text(text).encode()).hexdigest()

    return digest


def _decoded(decoder: Callable[[str], bytes], encoded: str, what: str) -> str:
    """``encoded`` decoded to text, else ValueError naming the parameter."""
    try:
        return decoder(check.non_empty_string(encoded, "encoded")).decode()
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"'encoded' is not valid {what}: {encoded!r}") from None


def from_base64(encoded: str) -> str:
    return _decoded(lambda text: base64.b64decode(text, validate=True), encoded, "Base64")


def from_hex_text(encoded: str) -> str:
    return _decoded(bytes.fromhex, encoded, "hexadecimal")


def _two_texts(rng: random.Random) -> dict[str, Any]:
    first, second = rng.sample(WORDS, 2)
    return {"first": first, "second": second}


def _shared_start(rng: random.Random) -> dict[str, Any]:
    first = rng.choice(WORDS)
    return {"first": first, "second": first[:rng.randint(2, len(first) - 1)] + rng.choice(("ing", "ful", "ster", "ology"))}


def _one_word(rng: random.Random) -> dict[str, Any]:
    return {"text": rng.choice(WORDS)}


def _same_length(rng: random.Random) -> dict[str, Any]:
    length = rng.choice((5, 6, 7))
    first, second = rng.sample([word for word in WORDS if len(word) == length], 2)
    return {"first": first, "second": second}


def _letter_draw(rng: random.Random) -> dict[str, Any]:
    text = rng.choice(PHRASES)
    return {"text": text, "letter": rng.choice(sorted({ch for ch in text.lower() if ch.isalpha()}))}


def _part_draw(rng: random.Random) -> dict[str, Any]:
    text = rng.choice(PHRASES)
    start = rng.randrange(max(1, len(text) - 2))
    return {"text": text, "part": text[start:start + 2].lower() if text[start:start + 2].strip() else "e"}


def _words_of(rng: random.Random) -> dict[str, Any]:
    text = rng.choice([p for p in PHRASES if len(p.split()) >= 4])
    return {"text": text, "count": rng.randint(1, len(text.split()) - 1)}


_CASES = (
    ("upper_case", str.upper, "The text in upper case.", "the upper-case form of {text}"),
    ("lower_case", str.lower, "The text in lower case.", "the lower-case form of {text}"),
    ("title_case", str.title, "The text with every word capitalised.", "the title-case form of {text}"),
    ("swap_case", str.swapcase, "The text with upper and lower case swapped.", "{text} with its letter case swapped"),
    ("sentence_case", _sentence, "The text in lower case but for its first letter.", ("the sentence-case form of "
     "{text}")),
    ("snake_case", _snake, "The text's words joined by underscores in lower case (snake_case).",
     "the snake_case form of {text}"),
    ("camel_case", _camel, "The text's words joined in camelCase.", "the camelCase form of {text}"),
    ("pascal_case", lambda t: "".join(w.capitalize() for w in _words(t)), "The text's words joined in PascalCase.",
     "the PascalCase form of {text}"),
    ("kebab_case", lambda t: "-".join(w.lower() for w in _words(t)), ("The text's words joined by hyphens in lower "
     "case (kebab-case)."), "the kebab-case form of {text}"),
    ("constant_case", lambda t: _snake(t).upper(), ("The text's words joined by underscores in upper case "
     "(CONSTANT_CASE)."), "the CONSTANT_CASE form of {text}"),
    ("alternating_case", _alternating, "The text with letters alternating lower and upper case, lower first.",
     "{text} in alternating case"),
)
_STATS = (
    ("character_count", len, "How many characters the text has, spaces included.",
     "the number of characters in {text}"),
    ("letter_count", lambda t: sum(ch.isalpha() for ch in t), "How many letters the text has.",
     "the number of letters in {text}"),
    ("non_space_count", lambda t: sum(not ch.isspace() for ch in t), ("How many characters the text has, spaces "
     "excluded."), "the number of non-space characters in {text}"),
    ("word_count", lambda t: len(t.split()), "How many words (separated by spaces) the text has.",
     "the number of words in {text}"),
    ("vowel_count", lambda t: sum(ch in _VOWELS for ch in t), "How many vowels (a, e, i, o, u) the text has.",
     "the number of vowels in {text}"),
    ("consonant_count", lambda t: sum(ch.isalpha() and ch not in _VOWELS for ch in t), ("How many consonants the text "
     "has."), "the number of consonants in {text}"),
    ("uppercase_count", lambda t: sum(ch.isupper() for ch in t), "How many upper-case letters the text has.",
     "the number of capital letters in {text}"),
    ("unique_word_count", lambda t: len({w.lower() for w in _words(t)}), ("How many different words the text has, "
     "case ignored."), "the number of different words in {text}"),
    ("longest_word", lambda t: max(_words(t), key=len), "The longest word of the text (the first on a tie).",
     "the longest word of {text}"),
    ("shortest_word", lambda t: min(_words(t), key=len), "The shortest word of the text (the first on a tie).",
     "the shortest word of {text}"),
    ("average_word_length", lambda t: round(sum(map(len, _words(t))) / len(_words(t)), 4), ("The mean length of the "
     "text's words in letters, rounded to 4 decimals."), "the average word length of {text}"),
    ("most_common_letter", lambda t: min(Counter(ch for ch in t.lower() if ch.isalpha()).items(),
                                         key=lambda item: (-item[1], item[0]))[0],
     "The letter that occurs most often in the text (the first alphabetically on a tie), lower case.",
     "the most common letter of {text}"),
    ("distinct_letter_count", lambda t: len({ch for ch in t.lower() if ch.isalpha()}), ("How many different letters "
     "the text uses, case ignored."), "the number of different letters in {text}"),
    ("space_count", lambda t: t.count(" "), "How many spaces the text has.", "the number of spaces in {text}"),
)
_TRANSFORMS = (
    ("reverse_text", lambda t: t[::-1], "The text backwards, character by character.", "{text} written backwards"),
    ("reverse_words", lambda t: " ".join(t.split()[::-1]), "The text's words in reverse order.",
     "{text} with its words in reverse order"),
    ("reverse_each_word", lambda t: " ".join(w[::-1] for w in t.split()), ("The text with each word spelled "
     "backwards, the words in place."), "{text} with each word spelled backwards"),
    ("remove_vowels", lambda t: "".join(ch for ch in t if ch not in _VOWELS), "The text without its vowels.",
     "{text} without its vowels"),
    ("remove_spaces", lambda t: "".join(t.split()), "The text without any whitespace.", "{text} without spaces"),
    ("sort_words", lambda t: " ".join(sorted(t.split(), key=str.lower)), ("The text's words sorted alphabetically, "
     "case ignored."), "the words of {text} in alphabetical order"),
    ("sort_letters", lambda t: "".join(sorted(ch for ch in t.lower() if ch.isalpha())), ("The text's letters in "
     "alphabetical order, lower case, without spaces."), "the letters of {text} in alphabetical order"),
    ("acronym", lambda t: "".join(w[0].upper() for w in _words(t)), ("The first letters of the text's words, in "
     "upper case."), "the acronym of {text}"),
    ("unique_letters", lambda t: "".join(dict.fromkeys(ch for ch in t.lower() if ch.isalpha())), ("The text's letters "
     "in order of first appearance, each once, lower case."), ("the distinct letters of {text} in order of first "
     "appearance")),
    ("double_letters", lambda t: "".join(ch * 2 for ch in t), "The text with every character doubled.",
     "{text} with every character doubled"),
    ("slugify", lambda t: "-".join(re.findall(r"[a-z0-9]+", t.lower())), ("The text as a URL slug: lower-case words "
     "and digits joined by hyphens."), "the URL slug of {text}"),
    ("first_word", lambda t: t.split()[0], "The first word of the text.", "the first word of {text}"),
    ("last_word", lambda t: t.split()[-1], "The last word of the text.", "the last word of {text}"),
    ("middle_character", lambda t: t[len(t) // 2], "The character in the middle of the text (the later of two).",
     "the middle character of {text}"),
)
_HASHES = (("md5", "MD5"), ("sha1", "SHA-1"), ("sha224", "SHA-224"), ("sha256", "SHA-256"), ("sha384", "SHA-384"),
           ("sha512", "SHA-512"), ("sha3_256", "SHA3-256"), ("sha3_512", "SHA3-512"), ("blake2s", "BLAKE2s"))
_ENCODINGS = (
    ("to_base64", lambda t: base64.b64encode(t.encode()).decode(), "base64", "The text encoded in Base64 (UTF-8).",
     "the Base64 encoding of {text}"),
    ("to_base32", lambda t: base64.b32encode(t.encode()).decode(), "label", "The text encoded in Base32 (UTF-8).",
     "the Base32 encoding of {text}"),
    ("to_hex_text", lambda t: t.encode().hex(), "hex_text", "The text's UTF-8 bytes as hexadecimal digits.",
     "the hexadecimal encoding of {text}"),
    ("url_encode", lambda t: urllib.parse.quote(t), "label", "The text percent-encoded for a URL (spaces as %20).",
     "the URL encoding of {text}"),
    ("to_binary_text", lambda t: " ".join(f"{byte:08b}" for byte in t.encode()), "label", ("The text's UTF-8 bytes as "
     "8-digit binary numbers separated by spaces."), "the binary encoding of {text}"),
    ("code_points", lambda t: " ".join(str(ord(ch)) for ch in t), "label", ("The Unicode code points of the text's "
     "characters, separated by spaces."), "the Unicode code points of {text}"),
    ("crc32", lambda t: f"{zlib.crc32(t.encode()):08x}", "label", ("The CRC-32 checksum of the text's UTF-8 bytes, "
     "8 hexadecimal digits."), "the CRC-32 checksum of {text}"),
    ("adler32", lambda t: f"{zlib.adler32(t.encode()):08x}", "label", ("The Adler-32 checksum of the text's UTF-8 "
     "bytes, 8 hexadecimal digits."), "the Adler-32 checksum of {text}"),
)

TOOLS: list[ToolSpec] = [
    *(tool("text_case", name, _on_text(operation), description, [_TEXT], "text", phrase)
      for name, operation, description, phrase in _CASES),
    *(tool("text_stats", name, _on_text(operation), description, [_TEXT],
           "label" if name in ("longest_word", "shortest_word", "most_common_letter") else
           "amount" if name == "average_word_length" else "count", phrase)
      for name, operation, description, phrase in _STATS),
    tool("text_stats", "count_letter", count_letter, "How many times a letter occurs in the text, case ignored.",
         [_TEXT, ("letter", "letter", "the letter to count")], "count",
         "the number of times {letter} occurs in {text}", draw=_letter_draw),
    tool("text_stats", "count_substring", count_substring, "How many times a piece of text occurs in the text "
         "(without overlaps, case ignored).", [_TEXT, ("part", "text", "the piece of text to count")], "count",
         "the number of times {part} occurs in {text}", draw=_part_draw),
    *(tool("text_transform", name, _on_text(operation), description, [_TEXT], "text", phrase)
      for name, operation, description, phrase in _TRANSFORMS),
    tool("text_transform", "truncate_words", truncate_words, "The first words of the text.",
         [_TEXT, ("count", "small_integer", "how many words to keep")], "text", "the first {count} words of {text}",
         draw=_words_of),
    tool("ciphers", "caesar_encrypt", caesar_encrypt, "The text with every letter shifted forward in the alphabet "
         "(Caesar cipher); other characters kept.", [_TEXT, ("shift", "shift", "how many places to shift")], "text",
         "{text} encrypted with a Caesar shift of {shift}"),
    tool("ciphers", "caesar_decrypt", caesar_decrypt, "The text with every letter shifted back in the alphabet "
         "(undoes a Caesar cipher).", [_TEXT, ("shift", "shift", "how many places it was shifted")], "text",
         "{text} decrypted from a Caesar shift of {shift}"),
    tool("ciphers", "rot13", _on_text(lambda t: _shift_letters(t, 13)), "The text with every letter rotated by 13 "
         "places (ROT13).", [_TEXT], "text", "the ROT13 form of {text}"),
    tool("ciphers", "atbash", atbash, "The text with every letter mirrored in the alphabet (a becomes z: the Atbash "
         "cipher).", [_TEXT], "text", "the Atbash cipher of {text}"),
    tool("ciphers", "vigenere_encrypt", vigenere_encrypt, "The text encrypted with the Vigenère cipher under a key "
         "(letters only advance the key).", [_TEXT, ("key", "cipher_key", "the key word")], "text",
         "{text} encrypted with the Vigenère cipher under {key}"),
    tool("ciphers", "vigenere_decrypt", vigenere_decrypt, "The text decrypted from the Vigenère cipher under a key.",
         [_TEXT, ("key", "cipher_key", "the key word")], "text", "{text} decrypted from the Vigenère cipher under "
         "{key}"),
    tool("ciphers", "to_morse", to_morse, "The text in Morse code: letters separated by spaces, words by ' / '.",
         [_TEXT], "morse", "{text} in Morse code", refers="{text}"),
    tool("ciphers", "from_morse", from_morse, "Morse code (letters separated by spaces, words by '/') as lower-case "
         "text.", [("code", "morse", "the Morse code")], "text", "the text of {code}"),
    tool("ciphers", "nato_spelling", nato_spelling, "The text's letters spelled with the NATO phonetic alphabet.",
         [_TEXT], "label", "{text} spelled in the NATO phonetic alphabet"),
    tool("ciphers", "leetspeak", _on_text(lambda t: t.translate(_LEET)), "The text in leetspeak (a as 4, e as 3, "
         "i as 1, o as 0, s as 5, t as 7).", [_TEXT], "text", "{text} in leetspeak"),
    tool("ciphers", "pig_latin", pig_latin, "The text in Pig Latin, lower case.", [_TEXT], "text",
         "{text} in Pig Latin"),
    tool("ciphers", "rail_fence", rail_fence, "The text encrypted with the rail fence cipher on a number of rails.",
         [_TEXT, ("rails", "small_integer", "the number of rails, 2 or more")], "text",
         "{text} encrypted with a rail fence of {rails} rails"),
    *(tool("encodings", name, _on_text(operation), description, [_TEXT], returns, phrase,
           refers="{text}" if returns != "label" else "")
      for name, operation, returns, description, phrase in _ENCODINGS),
    tool("encodings", "from_base64", from_base64, "The text a Base64 string encodes (UTF-8).",
         [("encoded", "base64", "the Base64 string")], "text", "the text encoded by {encoded}"),
    tool("encodings", "from_hex_text", from_hex_text, "The text whose UTF-8 bytes the hexadecimal digits spell.",
         [("encoded", "hex_text", "the hexadecimal digits")], "text", "the text encoded by {encoded}"),
    *(tool("hashing", f"{algorithm}_digest", _hash(algorithm), f"The {label} digest of the text's UTF-8 bytes, in "
           "hexadecimal.", [_TEXT], "label", f"the {label} hash of {{text}}") for algorithm, label in _HASHES),
    tool("string_compare", "levenshtein_distance", _pair(_levenshtein), "The edit distance between two texts: the "
         "fewest insertions, deletions and substitutions turning one into the other.", _TWO, "count",
         "the edit distance between {first} and {second}", draw=_two_texts),
    tool("string_compare", "hamming_distance", hamming_distance, "How many positions differ between two texts of "
         "equal length.", _TWO, "count", "the Hamming distance between {first} and {second}", draw=_same_length),
    tool("string_compare", "is_anagram", _pair(lambda a, b: _letters(a) == _letters(b)), "Whether two texts use the "
         "same letters and digits the same number of times (case and spaces ignored).", _TWO, "flag",
         "whether {first} and {second} are anagrams", draw=_two_texts),
    tool("string_compare", "common_prefix", _pair(_common_prefix), "The longest start the two texts share.", _TWO,
         "label", "the longest common prefix of {first} and {second}", draw=_shared_start),
    tool("string_compare", "common_letter_count", _pair(lambda a, b: len({c for c in a.lower() if c.isalpha()}
                                                                          & {c for c in b.lower() if c.isalpha()})),
         "How many different letters the two texts share, case ignored.", _TWO, "count",
         "the number of letters {first} and {second} have in common", draw=_two_texts),
    tool("string_compare", "word_jaccard", _pair(_jaccard), "The Jaccard similarity of the two texts' sets of words "
         "(case ignored), rounded to 4 decimals.", _TWO, "amount",
         "the Jaccard similarity of the words of {first} and {second}", draw=_two_texts),
    tool("string_compare", "longest_common_subsequence", _pair(_lcs), "The length of the longest common subsequence "
         "of two texts.", _TWO, "count", "the length of the longest common subsequence of {first} and {second}",
         draw=_two_texts),
    tool("string_compare", "is_palindrome", is_palindrome, "Whether the text reads the same backwards, ignoring "
         "case, spaces and punctuation.", [_TEXT], "flag", "whether {text} is a palindrome", draw=_one_word),
    tool("string_compare", "soundex", soundex, "The Soundex code of a word (a letter and three digits).",
         [("word", "word", "the word")], "label", "the Soundex code of {word}"),
]
