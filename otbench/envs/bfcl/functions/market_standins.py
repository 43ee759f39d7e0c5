"""Offline stand-ins for BFCL's market web services: stock quotes, company names, stock
history, currency conversion and Amazon product look-ups.

Stock and currency answers come from small tables of real facts (approximate prices and
exchange rates of late June 2024, real dividend payers and split dates); Amazon products, which BFCL identifies by
ASINs only, are derived from a stable hash of the ASIN. Unknown symbols raise LookupError,
unknown currency codes and malformed ASINs ValueError, as the live services would refuse them.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime, time, timedelta
from typing import Any

from . import _checks as check
from . import _stable

# symbol: (company name, approximate share price in USD around 2024-06-28, quarterly dividend or None)
_STOCKS: dict[str, tuple[str, float, float | None]] = {
    "AAPL": ("Apple Inc.", 210.62, 0.25),
    "MSFT": ("Microsoft Corporation", 446.95, 0.75),
    "GOOGL": ("Alphabet Inc.", 182.15, 0.20),
    "GOOG": ("Alphabet Inc.", 183.42, 0.20),
    "AMZN": ("Amazon.com, Inc.", 193.25, None),
    "META": ("Meta Platforms, Inc.", 504.22, 0.50),
    "NFLX": ("Netflix, Inc.", 674.88, None),
    "TSLA": ("Tesla, Inc.", 197.88, None),
    "NVDA": ("NVIDIA Corporation", 123.54, 0.01),
    "BABA": ("Alibaba Group Holding Limited", 72.00, None),
    "IBM": ("International Business Machines Corporation", 172.95, 1.67),
    "INTC": ("Intel Corporation", 30.97, 0.125),
    "AMD": ("Advanced Micro Devices, Inc.", 162.21, None),
    "ORCL": ("Oracle Corporation", 141.20, 0.40),
    "CSCO": ("Cisco Systems, Inc.", 47.51, 0.40),
    "ADBE": ("Adobe Inc.", 555.54, None),
    "CRM": ("Salesforce, Inc.", 257.10, 0.40),
    "UBER": ("Uber Technologies, Inc.", 72.68, None),
    "TSM": ("Taiwan Semiconductor Manufacturing Company Limited", 173.81, 0.50),
    "SONY": ("Sony Group Corporation", 84.95, None),
    "JPM": ("JPMorgan Chase & Co.", 202.26, 1.15),
    "V": ("Visa Inc.", 262.47, 0.52),
    "BRK.B": ("Berkshire Hathaway Inc.", 406.80, None),
    "KO": ("The Coca-Cola Company", 63.65, 0.485),
    "PEP": ("PepsiCo, Inc.", 164.93, 1.355),
    "WMT": ("Walmart Inc.", 67.71, 0.2075),
    "DIS": ("The Walt Disney Company", 99.29, 0.45),
    "XOM": ("Exxon Mobil Corporation", 115.12, 0.95),
}
# Real stock splits: symbol -> [(date, "new:old")].
_SPLITS = {
    "AAPL": [(date(2020, 8, 31), "4:1")],
    "TSLA": [(date(2020, 8, 31), "5:1"), (date(2022, 8, 25), "3:1")],
    "AMZN": [(date(2022, 6, 6), "20:1")],
    "GOOGL": [(date(2022, 7, 18), "20:1")],
    "GOOG": [(date(2022, 7, 18), "20:1")],
    "NVDA": [(date(2021, 7, 20), "4:1"), (date(2024, 6, 10), "10:1")],
    "WMT": [(date(2024, 2, 26), "3:1")],
}
_HISTORY_END = datetime(2024, 6, 28, 16, 0)
_HISTORY_POINTS = 12
_INTRADAY_MINUTES = {"5m": 5, "15m": 15, "30m": 30, "1h": 60}
_CALENDAR_MONTHS = {"1mo": 1, "3mo": 3}
_INTERVALS = ("5m", "15m", "30m", "1h", "1d", "1wk", "1mo", "3mo")
# Units of currency per US dollar, approximately as of late June 2024.
_PER_USD = {
    "USD": 1.0, "EUR": 0.933, "GBP": 0.791, "JPY": 160.9, "CNY": 7.267, "AUD": 1.499, "CAD": 1.368,
    "CHF": 0.899, "INR": 83.39, "KRW": 1381.0, "MXN": 18.32, "BRL": 5.59, "RUB": 85.7, "SEK": 10.59,
    "NOK": 10.65, "DKK": 6.96, "PLN": 4.02, "CZK": 23.39, "HUF": 368.9, "RON": 4.64, "UAH": 40.5,
    "TRY": 32.8, "SGD": 1.355, "HKD": 7.808, "NZD": 1.642, "ZAR": 18.2, "AED": 3.6725, "SAR": 3.75,
    "ILS": 3.76, "THB": 36.7, "IDR": 16375.0, "MYR": 4.717, "PHP": 58.6, "TWD": 32.5, "VND": 25455.0,
    "EGP": 48.0, "NGN": 1510.0, "ARS": 911.0, "CLP": 943.0, "COP": 4150.0,
}
_BRANDS = ("Auralink", "Nordvale", "Kestrel", "Brightforge", "Lumina", "Vantix", "Cobaltline",
           "Everstone", "Halcyon", "Trailpeak", "Zentro", "Orbix")
# (product, lowest price, highest price) in USD.
_PRODUCTS = (
    ("Wireless Noise Cancelling Headphones", 49, 349), ("Portable Bluetooth Speaker", 25, 199),
    ("Smart Watch with Heart Rate Monitor", 59, 399), ("4K Streaming Stick", 29, 69),
    ("Mechanical Gaming Keyboard", 39, 179), ("Ergonomic Wireless Mouse", 15, 79),
    ("65W USB-C Fast Charger", 19, 59), ("1TB Portable SSD", 69, 159), ("Robot Vacuum Cleaner", 149, 599),
    ("5.8 Qt Air Fryer", 59, 159), ("Espresso Machine", 99, 499), ("Rechargeable Electric Toothbrush", 29, 149),
    ("Non-Slip Yoga Mat", 15, 60), ("32 oz Insulated Water Bottle", 15, 45), ("LED Desk Lamp", 19, 69),
    ("Fitness Tracker", 29, 149), ("10.1-inch Tablet, 64GB", 99, 329), ("1080p HD Webcam", 25, 99),
)


def _symbol(stock_name: str) -> str:
    symbol = check.non_empty_string(stock_name, "stock_name").upper()
    if not re.fullmatch(r"[A-Z]{1,5}([.-][A-Z])?", symbol):
        raise ValueError(f"'stock_name' must be a stock ticker symbol such as 'AAPL', got {stock_name!r}")
    if symbol not in _STOCKS:
        raise LookupError(f"no listed stock found for symbol {symbol!r}")
    return symbol


def get_stock_price_by_stock_name(stock_name: str) -> float:
    """Latest share price in USD of a stock given by ticker symbol ('AAPL' -> 210.62).

    Deterministic offline stand-in for a live stock quote web service: answers from a table of
    ~30 real tickers with their approximate prices of late June 2024.
    """
    return _STOCKS[_symbol(stock_name)][1]


def get_company_name_by_stock_name(stock_name: str) -> str:
    """Company name of a ticker symbol ('AAPL' -> 'Apple Inc.').

    Deterministic offline stand-in for a live stock search web service: answers from a table of
    ~30 real tickers.
    """
    return _STOCKS[_symbol(stock_name)][0]


def _history_times(interval: str) -> list[datetime]:
    """The last 12 bar start times up to 2024-06-28, newest last, on trading days and hours."""
    times: list[datetime] = []
    if interval in _INTRADAY_MINUTES:
        step = timedelta(minutes=_INTRADAY_MINUTES[interval])
        moment = _HISTORY_END - step
        while len(times) < _HISTORY_POINTS:
            if moment.weekday() < 5 and time(9, 30) <= moment.time() < time(16, 0):
                times.append(moment)
            moment -= step
    elif interval in _CALENDAR_MONTHS:
        months = _CALENDAR_MONTHS[interval]
        index = _HISTORY_END.year * 12 + (_HISTORY_END.month - 1) // months * months
        times = [datetime((index - i * months) // 12, (index - i * months) % 12 + 1, 1) for i in range(_HISTORY_POINTS)]
    else:
        step = timedelta(days=1 if interval == "1d" else 7)
        back_to_monday = timedelta(days=_HISTORY_END.weekday() if interval == "1wk" else 0)
        day = datetime.combine(_HISTORY_END.date() - back_to_monday, time())
        while len(times) < _HISTORY_POINTS:
            if day.weekday() < 5:
                times.append(day)
            day -= step
    return sorted(times)


def _diff_and_splits(value: str | bool) -> bool:
    if isinstance(value, bool):
        return value
    return check.one_of(value, "diffandsplits", {"true": True, "false": False})


def get_stock_history(stock_name: str, interval: str, diffandsplits: str = "false") -> dict[str, object]:
    """Price history of a stock: the last 12 bars of the given interval up to 2024-06-28.

    Deterministic offline stand-in for a live stock history web service (Yahoo Finance style):
    OHLC prices are a stable-hash random walk ending at the stock's table price on 2024-06-28.
    ``interval`` is one of 5m|15m|30m|1h|1d|1wk|1mo|3mo; with ``diffandsplits`` 'true' the
    result also lists the dividends and (real) stock splits inside the period. Returns
    {"symbol", "interval", "currency", "prices": [{"date", "open", "high", "low", "close",
    "volume"}, ...]} plus "events": {"dividends": [...], "splits": [...]} when asked.
    """
    symbol = _symbol(stock_name)
    step = check.string(interval, "interval").strip().lower()
    if step not in _INTERVALS:
        raise ValueError(f"'interval' must be one of {'|'.join(_INTERVALS)}, got {interval!r}")
    with_events = _diff_and_splits(diffandsplits)
    _, close, dividend = _STOCKS[symbol]
    volatility = {"5m": 0.002, "15m": 0.003, "30m": 0.004, "1h": 0.006, "1d": 0.015, "1wk": 0.03,
                  "1mo": 0.06, "3mo": 0.1}[step]
    bars: list[dict[str, Any]] = []
    for moment in reversed(_history_times(step)):
        key = ("stock-history", symbol, step, moment.isoformat())
        open_price = close / (1 + _stable.uniform(-volatility, volatility, *key, "move"))
        high = max(open_price, close) * (1 + _stable.uniform(0, volatility / 2, *key, "high"))
        low = min(open_price, close) * (1 - _stable.uniform(0, volatility / 2, *key, "low"))
        stamp = moment.strftime("%Y-%m-%d %H:%M" if step in _INTRADAY_MINUTES else "%Y-%m-%d")
        bars.append({"date": stamp, "open": round(open_price, 2), "high": round(high, 2), "low": round(low, 2),
                     "close": round(close, 2), "volume": _stable.randint(1_000_000, 90_000_000, *key, "volume")})
        close = open_price
    bars.reverse()
    history: dict[str, object] = {"symbol": symbol, "interval": step, "currency": "USD", "prices": bars}
    if with_events:
        first = datetime.strptime(bars[0]["date"][:10], "%Y-%m-%d").date()
        last = _HISTORY_END.date()
        dividends = []
        if dividend is not None:
            # Quarterly ex-dividend dates, taken as the 10th of Feb/May/Aug/Nov.
            dividends = [{"date": f"{year}-{month:02d}-10", "amount": dividend}
                         for year in range(first.year, last.year + 1) for month in (2, 5, 8, 11)
                         if first <= date(year, month, 10) <= last]
        splits = [{"date": day.isoformat(), "ratio": ratio}
                  for day, ratio in _SPLITS.get(symbol, []) if first <= day <= last]
        history["events"] = {"dividends": dividends, "splits": splits}
    return history


def _currency(code: str, name: str) -> float:
    text = check.non_empty_string(code, name).upper()
    if text not in _PER_USD:
        raise ValueError(f"'{name}' is not a supported ISO 4217 currency code: {code!r}")
    return _PER_USD[text]


def convert_currency(amount: float, from_currency: str, to_currency: str) -> float:
    """``amount`` in ``from_currency`` expressed in ``to_currency`` (ISO codes such as 'USD', 'EUR').

    Deterministic offline stand-in for a live exchange-rate web service (ExchangeRate-API):
    uses a built-in table of ~40 approximate exchange rates of late June 2024. Unknown codes raise
    ValueError.
    """
    value = check.number(amount, "amount")
    source, target = _currency(from_currency, "from_currency"), _currency(to_currency, "to_currency")
    return value * target / source


def _asin(value: str) -> str:
    text = check.non_empty_string(value, "ASIN").upper()
    if not re.fullmatch(r"[A-Z0-9]{10}", text):
        raise ValueError(f"'ASIN' must be a 10-character Amazon ASIN such as 'B08PPDJWC8', got {value!r}")
    return text


def _product(asin: str) -> tuple[str, float]:
    """(name, price) of the product an ASIN stands for, fixed by the ASIN's hash."""
    brand = _stable.choice(_BRANDS, "asin-brand", asin)
    name, low, high = _stable.choice(_PRODUCTS, "asin-product", asin)
    price = math.floor(_stable.uniform(low, high, "asin-price", asin)) + 0.99
    return f"{brand} {name}", price


def get_price_by_amazon_ASIN(ASIN: str) -> str:  # BFCL's names
    """Current price of an Amazon product as a dollar string, e.g. '$79.99'.

    Deterministic offline stand-in for a live Amazon product data web service: the product
    behind a well-formed ASIN is derived from a stable hash of the ASIN (consistent with the
    name and rating stand-ins). Malformed ASINs raise ValueError.
    """
    return f"${_product(_asin(ASIN))[1]:.2f}"


def get_product_name_by_amazon_ASIN(ASIN: str) -> str:  # BFCL's names
    """Name of an Amazon product, e.g. 'Kestrel Portable Bluetooth Speaker'.

    Deterministic offline stand-in for a live Amazon product data web service: the product
    behind a well-formed ASIN is derived from a stable hash of the ASIN. Malformed ASINs raise
    ValueError.
    """
    return _product(_asin(ASIN))[0]


def get_rating_by_amazon_ASIN(ASIN: str) -> float:  # BFCL's names
    """Average customer star rating of an Amazon product, from 1 to 5 (e.g. 4.4).

    Deterministic offline stand-in for a live Amazon product data web service: the rating is
    derived from a stable hash of the ASIN. Malformed ASINs raise ValueError.
    """
    return round(_stable.uniform(3.5, 4.9, "asin-rating", _asin(ASIN)), 1)
