"""Offline stand-ins for BFCL's geography web services: geocoding, IP lookup, zip codes,
time zones and current weather.

They share one small table of real places so that their answers agree with each other: an IP
address maps to a real US location whose zip code ``retrieve_city_based_on_zipcode`` resolves
back to the same city. Unknown cities and zip codes raise LookupError, as the live services
answer "not found"; malformed arguments raise TypeError/ValueError.
"""

from __future__ import annotations

import ipaddress
import math
import re
import unicodedata

from . import _checks as check
from . import _stable

# name: (latitude, longitude, IANA time zone). Real coordinates of city centres.
_CITIES: dict[str, tuple[float, float, str]] = {
    "paris": (48.8566, 2.3522, "Europe/Paris"),
    "cairo": (30.0444, 31.2357, "Africa/Cairo"),
    "new york": (40.7128, -74.0060, "America/New_York"),
    "los angeles": (34.0522, -118.2437, "America/Los_Angeles"),
    "chicago": (41.8781, -87.6298, "America/Chicago"),
    "houston": (29.7604, -95.3698, "America/Chicago"),
    "cupertino": (37.3230, -122.0322, "America/Los_Angeles"),
    "san francisco": (37.7749, -122.4194, "America/Los_Angeles"),
    "mountain view": (37.3861, -122.0839, "America/Los_Angeles"),
    "seattle": (47.6062, -122.3321, "America/Los_Angeles"),
    "las vegas": (36.1699, -115.1398, "America/Los_Angeles"),
    "beverly hills": (34.0736, -118.4004, "America/Los_Angeles"),
    "phoenix": (33.4484, -112.0740, "America/Phoenix"),
    "denver": (39.7392, -104.9903, "America/Denver"),
    "dallas": (32.7767, -96.7970, "America/Chicago"),
    "austin": (30.2672, -97.7431, "America/Chicago"),
    "atlanta": (33.7490, -84.3880, "America/New_York"),
    "charlotte": (35.2271, -80.8431, "America/New_York"),
    "miami": (25.7617, -80.1918, "America/New_York"),
    "washington": (38.9072, -77.0369, "America/New_York"),
    "ashburn": (39.0438, -77.4874, "America/New_York"),
    "philadelphia": (39.9526, -75.1652, "America/New_York"),
    "princeton": (40.3573, -74.6672, "America/New_York"),
    "boston": (42.3601, -71.0589, "America/New_York"),
    "honolulu": (21.3069, -157.8583, "Pacific/Honolulu"),
    "anchorage": (61.2181, -149.9003, "America/Anchorage"),
    "toronto": (43.6532, -79.3832, "America/Toronto"),
    "ottawa": (45.4215, -75.6972, "America/Toronto"),
    "vancouver": (49.2827, -123.1207, "America/Vancouver"),
    "mexico city": (19.4326, -99.1332, "America/Mexico_City"),
    "bogota": (4.7110, -74.0721, "America/Bogota"),
    "lima": (-12.0464, -77.0428, "America/Lima"),
    "sao paulo": (-23.5505, -46.6333, "America/Sao_Paulo"),
    "rio de janeiro": (-22.9068, -43.1729, "America/Sao_Paulo"),
    "buenos aires": (-34.6037, -58.3816, "America/Argentina/Buenos_Aires"),
    "reykjavik": (64.1466, -21.9426, "Atlantic/Reykjavik"),
    "dublin": (53.3498, -6.2603, "Europe/Dublin"),
    "london": (51.5074, -0.1278, "Europe/London"),
    "lisbon": (38.7223, -9.1393, "Europe/Lisbon"),
    "madrid": (40.4168, -3.7038, "Europe/Madrid"),
    "brussels": (50.8503, 4.3517, "Europe/Brussels"),
    "amsterdam": (52.3676, 4.9041, "Europe/Amsterdam"),
    "zurich": (47.3769, 8.5417, "Europe/Zurich"),
    "rome": (41.9028, 12.4964, "Europe/Rome"),
    "berlin": (52.5200, 13.4050, "Europe/Berlin"),
    "prague": (50.0755, 14.4378, "Europe/Prague"),
    "vienna": (48.2082, 16.3738, "Europe/Vienna"),
    "bratislava": (48.1486, 17.1077, "Europe/Bratislava"),
    "stockholm": (59.3293, 18.0686, "Europe/Stockholm"),
    "warsaw": (52.2297, 21.0122, "Europe/Warsaw"),
    "athens": (37.9838, 23.7275, "Europe/Athens"),
    "bucharest": (44.4268, 26.1025, "Europe/Bucharest"),
    "istanbul": (41.0082, 28.9784, "Europe/Istanbul"),
    "kyiv": (50.4501, 30.5234, "Europe/Kyiv"),
    "moscow": (55.7558, 37.6173, "Europe/Moscow"),
    "lagos": (6.5244, 3.3792, "Africa/Lagos"),
    "nairobi": (-1.2921, 36.8219, "Africa/Nairobi"),
    "johannesburg": (-26.2041, 28.0473, "Africa/Johannesburg"),
    "cape town": (-33.9249, 18.4241, "Africa/Johannesburg"),
    "riyadh": (24.7136, 46.6753, "Asia/Riyadh"),
    "dubai": (25.2048, 55.2708, "Asia/Dubai"),
    "tehran": (35.6892, 51.3890, "Asia/Tehran"),
    "karachi": (24.8607, 67.0011, "Asia/Karachi"),
    "delhi": (28.7041, 77.1025, "Asia/Kolkata"),
    "new delhi": (28.6139, 77.2090, "Asia/Kolkata"),
    "mumbai": (19.0760, 72.8777, "Asia/Kolkata"),
    "kathmandu": (27.7172, 85.3240, "Asia/Kathmandu"),
    "dhaka": (23.8103, 90.4125, "Asia/Dhaka"),
    "bangkok": (13.7563, 100.5018, "Asia/Bangkok"),
    "singapore": (1.3521, 103.8198, "Asia/Singapore"),
    "jakarta": (-6.2088, 106.8456, "Asia/Jakarta"),
    "hong kong": (22.3193, 114.1694, "Asia/Hong_Kong"),
    "beijing": (39.9042, 116.4074, "Asia/Shanghai"),
    "shanghai": (31.2304, 121.4737, "Asia/Shanghai"),
    "manila": (14.5995, 120.9842, "Asia/Manila"),
    "taipei": (25.0330, 121.5654, "Asia/Taipei"),
    "seoul": (37.5665, 126.9780, "Asia/Seoul"),
    "tokyo": (35.6762, 139.6503, "Asia/Tokyo"),
    "sydney": (-33.8688, 151.2093, "Australia/Sydney"),
    "melbourne": (-37.8136, 144.9631, "Australia/Melbourne"),
    "auckland": (-36.8485, 174.7633, "Pacific/Auckland"),
}
_CITY_ALIASES = {"nyc": "new york", "new york city": "new york", "la": "los angeles", "sf": "san francisco",
                 "washington dc": "washington", "washington d.c.": "washington", "kiev": "kyiv",
                 "bombay": "mumbai", "peking": "beijing"}

# zip code: city. Real US zip codes; the first group doubles as the locations IP addresses map to.
_ZIP_CITIES = {
    "94043": "Mountain View", "10001": "New York", "60601": "Chicago", "94102": "San Francisco",
    "90210": "Beverly Hills", "08540": "Princeton", "98101": "Seattle", "78701": "Austin",
    "02108": "Boston", "33131": "Miami", "80202": "Denver", "20147": "Ashburn", "75201": "Dallas",
    "30303": "Atlanta", "85004": "Phoenix",
    "10118": "New York", "90001": "Los Angeles", "94105": "San Francisco", "60614": "Chicago",
    "02139": "Cambridge", "20500": "Washington", "19103": "Philadelphia", "89101": "Las Vegas",
    "96813": "Honolulu", "99501": "Anchorage", "37201": "Nashville", "48201": "Detroit",
    "55401": "Minneapolis", "63101": "St. Louis", "70112": "New Orleans", "97201": "Portland",
    "77002": "Houston", "95014": "Cupertino",
}
_IP_ZIPS = ("94043", "10001", "60601", "94102", "90210", "08540", "98101", "78701", "02108", "33131",
            "80202", "20147", "75201", "30303", "85004")
_NEAREST_CITY_KM = 300.0
_EARTH_RADIUS_KM = 6371.0


def _city_key(name: str) -> str:
    """'  São Paulo, Brazil ' -> 'sao paulo': accents folded, country/state suffix dropped."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    key = " ".join(folded.split(",")[0].lower().split())
    return _CITY_ALIASES.get(key, key)


def get_coordinates_from_city(city_name: str) -> dict[str, float]:
    """Latitude and longitude of a city: {"lat": ..., "lon": ...}.

    Deterministic offline stand-in for a live geocoding web service (Maps.co Geocoding API):
    answers from a built-in table of real coordinates of ~80 major cities; 'Paris, France'
    works like 'Paris'. Unknown cities raise LookupError, as the service finds nothing.
    """
    key = _city_key(check.non_empty_string(city_name, "city_name"))
    if key not in _CITIES:
        raise LookupError(f"no location found for city {city_name!r}")
    latitude, longitude, _ = _CITIES[key]
    return {"lat": latitude, "lon": longitude}


def _ip_zip(ip_address: str) -> str:
    text = check.non_empty_string(ip_address, "ip_address")
    try:
        address = ipaddress.ip_address(text)
    except ValueError as exc:
        raise ValueError(f"'ip_address' is not a valid IPv4 or IPv6 address: {ip_address!r}") from exc
    return _stable.choice(_IP_ZIPS, "ip-location", str(address))


def get_coordinate_by_ip_address(ip_address: str) -> dict[str, float]:
    """Latitude and longitude of an IP address: {"lat": ..., "lon": ...}.

    Deterministic offline stand-in for a live IP geolocation web service: every valid IPv4/IPv6
    address maps, by a stable hash, to one of 15 real US locations (the same one that
    ``get_zipcode_by_ip_address`` reports). Malformed addresses raise ValueError.
    """
    latitude, longitude, _ = _CITIES[_city_key(_ZIP_CITIES[_ip_zip(ip_address)])]
    return {"lat": latitude, "lon": longitude}


def get_zipcode_by_ip_address(ip_address: str) -> str:
    """The US zip code of an IP address's location, as a 5-digit string.

    Deterministic offline stand-in for a live IP geolocation web service: every valid address
    maps, by a stable hash, to one of 15 real US locations. Malformed addresses raise ValueError.
    """
    return _ip_zip(ip_address)


def retrieve_city_based_on_zipcode(zipcode: str) -> str:
    """The city of a US zip code, e.g. '90210' -> 'Beverly Hills'.

    Deterministic offline stand-in for a live zip code lookup web service: answers from a
    built-in table of ~35 real zip codes; other well-formed codes raise LookupError (not found),
    malformed ones ValueError. A ZIP+4 suffix ('10001-1234') is ignored.
    """
    if isinstance(zipcode, int) and not isinstance(zipcode, bool) and 0 <= zipcode <= 99999:
        zipcode = f"{zipcode:05d}"
    text = check.non_empty_string(zipcode, "zipcode")
    if not re.fullmatch(r"\d{5}(-\d{4})?", text):
        raise ValueError(f"'zipcode' must be a 5-digit US zip code, got {zipcode!r}")
    city = _ZIP_CITIES.get(text[:5])
    if city is None:
        raise LookupError(f"no city found for zipcode {text[:5]!r}")
    return city


def _coordinate(value: str | float, name: str, limit: float) -> float:
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError as exc:
            raise ValueError(f"'{name}' must be a number (as text or a number), got {value!r}") from exc
    else:
        number = float(check.number(value, name))
    if not -limit <= number <= limit:
        raise ValueError(f"'{name}' must be between {-limit:g} and {limit:g}, got {value!r}")
    return number


def _distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance by the haversine formula."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    half_chord = (math.sin((phi2 - phi1) / 2) ** 2
                  + math.cos(phi1) * math.cos(phi2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * _EARTH_RADIUS_KM * math.asin(math.sqrt(min(1.0, half_chord)))


def get_time_zone_by_coord(long: str, lat: str) -> str:
    """IANA time zone name of a coordinate, e.g. ('139.69', '35.69') -> 'Asia/Tokyo'.

    Deterministic offline stand-in for a live time zone lookup web service: the zone of the
    nearest of ~80 real cities within 300 km, else the nautical zone of the longitude
    ('Etc/GMT-8' for 120 degrees east). Coordinates may be numeric strings or numbers.
    """
    longitude = _coordinate(long, "long", 180.0)
    latitude = _coordinate(lat, "lat", 90.0)
    distance, zone = min((_distance_km(latitude, longitude, c_lat, c_lon), tz) for c_lat, c_lon, tz in _CITIES.values())
    if distance <= _NEAREST_CITY_KM:
        return zone
    offset = round(longitude / 15)
    return "Etc/GMT" if offset == 0 else f"Etc/GMT{-offset:+d}"


def get_weather_data(coordinates: list[float]) -> dict[str, object]:
    """Current weather at [latitude, longitude], shaped like an Open-Meteo "current" response.

    Deterministic offline stand-in for a live weather web service (Open-Meteo API): values are
    derived from a stable hash of the coordinates, with temperature falling from ~30 C at the
    equator to ~-25 C at the poles. Returns {"latitude", "longitude", "current": {...},
    "current_units": {...}}.
    """
    latitude, longitude = check.point(coordinates, "coordinates")
    if not -90 <= latitude <= 90 or not -180 <= longitude <= 180:
        raise ValueError(f"'coordinates' must be [latitude, longitude] within +-90 and +-180, got {coordinates!r}")
    key = ("weather", round(latitude, 4), round(longitude, 4))
    temperature = 30.0 - 0.6 * abs(latitude) + _stable.uniform(-6.0, 6.0, *key, "temperature")
    return {
        "latitude": float(latitude),
        "longitude": float(longitude),
        "current": {
            "temperature_2m": round(temperature, 1),
            "relative_humidity_2m": _stable.randint(15, 95, *key, "humidity"),
            "wind_speed_10m": round(_stable.uniform(0.0, 40.0, *key, "wind"), 1),
            "weather_code": _stable.choice((0, 1, 2, 3, 45, 51, 61, 71, 80, 95), *key, "code"),
        },
        "current_units": {
            "temperature_2m": "°C",
            "relative_humidity_2m": "%",
            "wind_speed_10m": "km/h",
            "weather_code": "wmo code",
        },
    }
