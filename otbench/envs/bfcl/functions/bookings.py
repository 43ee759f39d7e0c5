"""Hotel booking actions: book a room, price a stay, confirm a booking.

BFCL's versions would write to a booking system; these have no side effects and derive booking
and confirmation numbers from a stable hash of the arguments, so repeating a call repeats its
output.
"""

from __future__ import annotations

from datetime import date, datetime

from . import _checks as check
from . import _stable


def _booking_date(value: str, name: str) -> date:
    text = check.non_empty_string(value, name)
    try:
        return datetime.strptime(text, "%m-%d-%Y").date()
    except ValueError as exc:
        raise ValueError(f"'{name}' must be a date in MM-DD-YYYY format, got {value!r}") from exc


def book_room(
    room_type: str,
    check_in_date: str,
    check_out_date: str,
    customer_id: str,
    price: float = 0.0,
    discount_code: str | None = None,
) -> dict[str, object]:
    """Books a room and returns the booking record.

    BFCL lists ``price`` (the maximum price, default 0.0) second, before required parameters;
    Python requires defaults last, so the optional ``price`` and ``discount_code`` come after the
    required ones. Calls are made with keyword arguments, so only error texts see the order.
    Returns {"status", "booking_id", "room_number", "room_type", "customer_id", "check_in_date",
    "check_out_date", "nights", "max_price", "discount_code"}.
    """
    kind = check.non_empty_string(room_type, "room_type")
    arrival = _booking_date(check_in_date, "check_in_date")
    departure = _booking_date(check_out_date, "check_out_date")
    customer = check.non_empty_string(customer_id, "customer_id")
    max_price = check.number(price, "price")
    if max_price < 0:
        raise ValueError(f"'price' must be non-negative, got {max_price!r}")
    code = None if discount_code is None else check.string(discount_code, "discount_code")
    if departure <= arrival:
        raise ValueError("'check_out_date' must be after 'check_in_date'")
    key = ("booking", kind.lower(), arrival.isoformat(), departure.isoformat(), customer, max_price, code)
    return {
        "status": "booked",
        "booking_id": f"BK-{_stable.randint(0, 16**8 - 1, *key):08X}",
        "room_number": str(_stable.randint(1, 12, *key, "floor") * 100 + _stable.randint(1, 40, *key, "room")),
        "room_type": kind,
        "customer_id": customer,
        "check_in_date": check_in_date.strip(),
        "check_out_date": check_out_date.strip(),
        "nights": (departure - arrival).days,
        "max_price": max_price,
        "discount_code": code,
    }


def calculate_total_price(room_price: float, nights: int, discount: float = 0) -> float:
    """Total for a stay: room_price * nights - discount (a discount amount, not a percentage)."""
    nightly = check.number(room_price, "room_price")
    if nightly < 0:
        raise ValueError(f"'room_price' must be non-negative, got {nightly!r}")
    subtotal = nightly * check.non_negative_integer(nights, "nights")
    reduction = check.number(discount, "discount")
    if not 0 <= reduction <= subtotal:
        raise ValueError(f"'discount' must be between 0 and the stay's price {subtotal!r}, got {reduction!r}")
    return subtotal - reduction


def confirm_booking(customer_id: str, room_number: str, total_price: float) -> dict[str, object]:
    """Confirms a booking and returns the confirmation sent to the customer.

    Returns {"status": "confirmed", "confirmation_number", "customer_id", "room_number",
    "total_price", "message"}.
    """
    customer = check.non_empty_string(customer_id, "customer_id")
    room = check.non_empty_string(room_number, "room_number")
    amount = check.number(total_price, "total_price")
    if amount < 0:
        raise ValueError(f"'total_price' must be non-negative, got {amount!r}")
    number = f"CF-{_stable.randint(0, 16**8 - 1, 'confirmation', customer, room, amount):08X}"
    return {
        "status": "confirmed",
        "confirmation_number": number,
        "customer_id": customer,
        "room_number": room,
        "total_price": amount,
        "message": f"Booking of room {room} for customer {customer} confirmed; total {amount:.2f}.",
    }
