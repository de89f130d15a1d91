"""The safe fetcher and the extractor, against a real HTTP server on 127.0.0.1 in the test process.

No test here talks to any address but 127.0.0.1: ``no_foreign_connections``
replaces ``socket.create_connection`` for every test in this file and fails a
test that tries; private and metadata addresses are only ever *named* (in
redirects, in a fake resolver), never contacted.
"""

from __future__ import annotations

import ipaddress
import socket
import time
import tracemalloc
from urllib.parse import quote

import httpx
import pytest

from saturate.sources import decoding
from saturate.sources.address_guard import address_problem, check_url, parse_ip, redirect_target
from saturate.sources.extract import fallback_text, main_text
from saturate.sources.fetch import fetch_page
from saturate.sources.fetch_errors import FetchError, FetchRefused
from saturate.state.text import defuse

from conftest import LOCAL
from local_site import _A, ARTICLE, ENCODED, LocalSite, needs_zstd, zstandard

pytestmark = pytest.mark.usefixtures("no_foreign_connections")  # every test: 127.0.0.1 only


@pytest.fixture(scope="module")
def site():
    s = LocalSite()
    yield s
    s.close()


def fetch(url: str, **kw):
    kw.setdefault("allow_hosts", LOCAL)
    kw.setdefault("max_bytes", 2_000_000)
    kw.setdefault("timeout_s", 5)
    return fetch_page(url, **kw)


# --------------------------------------------------------------------- the guard


@pytest.mark.parametrize(
    "host, expected",
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # decimal
        ("0x7f000001", "127.0.0.1"),  # hex
        ("0x7F.0.0.1", "127.0.0.1"),  # hex part
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("017700000001", "127.0.0.1"),  # octal whole
        ("127.1", "127.0.0.1"),  # short form
        ("10.1", "10.0.0.1"),
        ("0", "0.0.0.0"),
        ("[::1]", "::1"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("[::ffff:7f00:1]", "::ffff:7f00:1"),
        ("fe80::1%25eth0", "fe80::1"),
        ("example.com", None),
        ("deadbeef", None),
        ("1.2.3.4.5", None),
        ("0x", None),
    ],
)
def test_parse_ip_normalises_every_literal_form(host, expected):
    ip = parse_ip(host)
    assert (str(ip) if ip is not None else None) == expected


@pytest.mark.parametrize(
    "ip, problem",
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "not globally routable"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "loopback (IPv6 carrying 127.0.0.1)"),
        ("::ffff:169.254.169.254", "link-local (IPv6 carrying 169.254.169.254)"),
        ("2002:7f00:1::", "loopback (IPv6 carrying 127.0.0.1)"),  # 6to4
        ("64:ff9b::a00:1", "private (IPv6 carrying 10.0.0.1)"),  # NAT64
        # special-purpose ranges Python 3.11's ipaddress calls global (address_guard.SPECIAL_PURPOSE)
        ("192.0.0.8", "IETF protocol assignment"),  # IPv4 dummy address
        ("192.0.0.9", "IETF protocol assignment"),  # PCP anycast
        ("192.0.0.200", "IETF protocol assignment"),  # unassigned in the /24
        ("192.88.99.1", "6to4 relay anycast"),
        ("192.88.99.255", "6to4 relay anycast"),
        ("fec0::1", "deprecated site-local"),
        ("feff:ffff::1", "deprecated site-local"),
        ("3fff::1", "documentation"),
        ("2002:c058:6301::", "6to4 relay anycast (IPv6 carrying 192.88.99.1)"),  # 6to4 of the relay
        ("2002:c000:8::", "IETF protocol assignment (IPv6 carrying 192.0.0.8)"),
        ("2002:c0a8:101::1", "private (IPv6 carrying 192.168.1.1)"),
        ("2002:6440:1::", "not globally routable (IPv6 carrying 100.64.0.1)"),
        ("64:ff9b::c000:8", "IETF protocol assignment (IPv6 carrying 192.0.0.8)"),  # NAT64
        ("::ffff:192.88.99.1", "6to4 relay anycast (IPv6 carrying 192.88.99.1)"),
        ("93.184.215.14", None),
        ("2606:4700:4700::1111", None),
        ("::ffff:93.184.215.14", None),
        ("2002:5db8:d70e::1", None),  # 6to4 of a public address
    ],
)
def test_address_problem_names_the_category(ip, problem):
    assert address_problem(ipaddress.ip_address(ip)) == problem


# Every block of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not globally reachable
# (iana.org/assignments/iana-ipv4-special-registry, /iana-ipv6-special-registry), plus fec0::/10 (deprecated
# site-local, RFC 3879) and multicast. Not here: ::ffff:0:0/96, 2002::/16 and 64:ff9b::/96, judged by the IPv4
# address they carry (above).
NOT_GLOBALLY_REACHABLE = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32", "192.0.0.170/31", "192.0.2.0/24", "192.88.99.0/24",
    "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
    "224.0.0.0/4",
    "::1/128", "::/128", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64", "2001::/23", "2001::/32", "2001:2::/48",
    "2001:10::/28", "2001:db8::/32", "3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
]  # fmt: skip


@pytest.mark.parametrize("block", NOT_GLOBALLY_REACHABLE)
def test_every_special_purpose_block_is_refused(block):
    net = ipaddress.ip_network(block)
    for ip in {net[0], net[min(1, net.num_addresses - 1)], net[net.num_addresses // 2], net[-1]}:
        assert address_problem(ip) is not None, ip


@pytest.mark.parametrize("block", ["192.31.196.0/24", "192.52.193.0/24", "192.175.48.0/24", "2620:4f:8000::/48"])
def test_globally_reachable_special_purpose_blocks_pass(block):  # AS112 and AMT: ordinary public addresses
    net = ipaddress.ip_network(block)
    assert address_problem(net[1]) is None and address_problem(net[-1]) is None


def no_dns(host, port):
    raise AssertionError(f"literal hosts must not be resolved: {host}")


@pytest.mark.parametrize(
    "url, why",
    [
        ("http://127.0.0.1/", "loopback address 127.0.0.1"),
        ("http://2130706433/", "loopback address 127.0.0.1"),
        ("http://0x7f000001/", "loopback address 127.0.0.1"),
        ("http://127.1:8080/x", "loopback address 127.0.0.1"),
        ("http://10.0.0.1/", "private address 10.0.0.1"),
        ("http://169.254.169.254/latest/meta-data/", "link-local address 169.254.169.254"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::1]/", "loopback address ::1"),
        ("http://[::ffff:127.0.0.1]/", "IPv6 carrying 127.0.0.1"),
        ("http://[::ffff:a9fe:a9fe]/", "IPv6 carrying 169.254.169.254"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("https://[fd00::5]:8443/", "private address fd00::5"),
        ("http://224.0.0.251/", "multicast"),
        ("file:///etc/passwd", "scheme file://"),
        ("ftp://ftp.example.com/pub/file.txt", "scheme ftp://"),
        ("gopher://example.com:70/1", "scheme gopher://"),
        ("javascript:alert(1)", "scheme javascript://"),
        ("data:text/html,<b>x</b>", "scheme data://"),
        ("//example.com/x", "scheme (none)://"),
        ("http:///nohost", "no host"),
        ("http://user:pw@example.com/", "credentials"),
        ("http://example.com@127.0.0.1/", "credentials"),
        ("http://0177.0.0.1/", "invalid URL"),  # httpx rejects the form outright
        ("http://192.0.0.8/", "IETF protocol assignment address 192.0.0.8"),
        ("http://192.88.99.1/", "6to4 relay anycast address 192.88.99.1"),
        ("http://[fec0::1]/", "deprecated site-local address fec0::1"),
        ("http://[2002:c058:6301::1]/", "6to4 relay anycast (IPv6 carrying 192.88.99.1)"),
        ("http://example.com:99999/", "port 99999 is out of range"),
        ("http://example.com:0/", "port 0 is out of range"),  # port 0 used to mean the default port
        ("http://exa mple.com/", "not a valid host name"),
        ("http://ex%61mple.com/", "not a valid host name"),
    ],
)
def test_guard_refuses_before_any_lookup_or_connection(url, why, no_foreign_connections):
    with pytest.raises(FetchRefused) as info:
        check_url(url, resolve=no_dns)
    assert why in info.value.reason
    assert no_foreign_connections == []


def fake_dns(table: dict[str, list[str]]):
    calls: list[str] = []

    def resolve(host, port):
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    resolve.calls = calls
    return resolve


DNS = {
    "intranet.example": ["10.1.2.3"],
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.215.14", "192.168.0.10"],  # one bad address is enough
    "v6.example": ["2606:4700::1", "::1"],
    "rebind.example": ["127.0.0.1"],
    "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
}


@pytest.mark.parametrize(
    "host, why",
    [
        ("intranet.example", "resolves to private address 10.1.2.3"),
        ("metadata.example", "resolves to link-local address 169.254.169.254"),
        ("mixed.example", "resolves to private address 192.168.0.10"),
        ("v6.example", "resolves to loopback address ::1"),
        ("REBIND.example.", "resolves to loopback address 127.0.0.1"),
    ],
)
def test_names_resolving_to_private_addresses_are_refused(host, why):
    resolve = fake_dns(DNS)
    with pytest.raises(FetchRefused) as info:
        check_url(f"https://{host}/page", resolve=resolve)
    assert why in info.value.reason and host.lower().rstrip(".") in info.value.reason


def test_localhost_is_refused_through_the_real_resolver():
    with pytest.raises(FetchRefused, match="localhost.*loopback"):
        check_url("http://localhost:9/")


def test_public_names_pass_with_their_vetted_addresses():
    target = check_url("https://Public.Example/x", resolve=fake_dns(DNS))
    assert target.ips == tuple(DNS["public.example"]) and target.port == 443 and target.allowed_by == ""


def test_unresolvable_names_are_fetch_errors():
    with pytest.raises(FetchError, match="cannot resolve host 'nowhere.example'"):
        check_url("http://nowhere.example/", resolve=fake_dns(DNS))


def test_a_hanging_resolver_is_bounded_by_the_time_cap():
    def hang(host, port):
        time.sleep(5)
        return ["93.184.215.14"]

    start = time.monotonic()
    with pytest.raises(FetchError, match="time cap"):
        fetch_page("http://slow-dns.example/", resolve=hang, timeout_s=0.3)
    assert time.monotonic() - start < 1.5


def test_allow_hosts_lets_exact_hosts_through_and_nothing_else():
    assert check_url("http://127.0.0.1:8000/", allow_hosts=LOCAL).allowed_by == "allow_hosts"
    assert check_url("http://2130706433/", allow_hosts=LOCAL).ips == ("127.0.0.1",)  # same IP, other spelling
    resolve = fake_dns(DNS)
    assert check_url("http://intranet.example/", allow_hosts=["intranet.example"], resolve=resolve).ips == ("10.1.2.3",)
    with pytest.raises(FetchRefused):  # a name that resolves to an allowed IP is not the allowed host
        check_url("http://rebind.example/", allow_hosts=LOCAL, resolve=resolve)
    with pytest.raises(FetchRefused):
        check_url("http://127.0.0.2/", allow_hosts=LOCAL)
    with pytest.raises(FetchRefused):  # the allow list never opens other schemes
        check_url("ftp://127.0.0.1/", allow_hosts=LOCAL)


# ------------------------------------------------------------ fetching for real


def test_article_is_fetched_and_its_main_text_extracted(site):
    page = fetch(site.url("/article"))
    assert page.status == 200 and page.content_type == "text/html" and page.final_url == site.url("/article")
    assert page.redirects == () and not page.truncated and "<nav>" in page.text
    text = main_text(page.text, page.content_type, page.final_url)
    assert "Victoria Falls is a waterfall on the Zambezi River" in text
    assert "Mosi-oa-Tunya" in text and "Queen Victoria" in text
    for junk in (
        "SCRIPT_TEXT",
        "STYLE_TEXT",
        "HEADER_BANNER",
        "NAV_HOME",
        "NAV_ABOUT_US",
        "FOOTER_TEXT",
        "ASIDE_RELATED",
    ):
        assert junk not in text, junk


def test_fallback_extractor_drops_boilerplate_too():
    text = fallback_text(ARTICLE)
    assert "Victoria Falls is a waterfall" in text and "Livingstone" in text
    for junk in ("SCRIPT_TEXT", "STYLE_TEXT", "HEADER_BANNER", "NAV_HOME", "FOOTER_TEXT", "ASIDE_RELATED"):
        assert junk not in text, junk


def test_plain_text_xhtml_and_charsets(site):
    plain = fetch(site.url("/plain"))
    assert plain.content_type == "text/plain"
    assert main_text(plain.text, plain.content_type) == "Plain text page.\n\nSecond line ‹b›bold‹/b›."
    xhtml = fetch(site.url("/xhtml"))
    assert xhtml.content_type == "application/xhtml+xml" and "Mosi-oa-Tunya" in main_text(
        xhtml.text, xhtml.content_type
    )
    latin = fetch(site.url("/latin1"))
    assert "Café crème à Zürich, naïve façade." in main_text(latin.text, latin.content_type)


def test_redirect_chain_of_five_is_followed(site):
    site.requests.clear()
    page = fetch(site.url("/r/5"))
    assert page.final_url == site.url("/article") and len(page.redirects) == 5
    assert [p for _, p in site.requests] == ["/r/5", "/r/4", "/r/3", "/r/2", "/r/1", "/article"]
    assert fetch(site.url("/absolute-redirect")).final_url == site.url("/article")


def test_a_sixth_redirect_is_refused(site):
    site.requests.clear()
    with pytest.raises(FetchRefused, match="too many redirects: more than 5"):
        fetch(site.url("/r/6"))
    assert [p for _, p in site.requests] == ["/r/6", "/r/5", "/r/4", "/r/3", "/r/2", "/r/1"]
    with pytest.raises(FetchRefused, match="too many redirects: more than 2"):
        fetch(site.url("/r/3"), max_redirects=2)


@pytest.mark.parametrize(
    "path, why",
    [
        ("/to-private", "private address 10.0.0.1"),
        ("/to-metadata", "link-local address 169.254.169.254"),
        ("/to-ipv6-loopback", "loopback address ::1"),  # 127.0.0.1 is allowed, ::1 is not
        ("/to-localhost-name", "'localhost' resolves to loopback"),
        ("/to-file", "scheme file://"),
    ],
)
def test_redirects_to_private_addresses_are_refused_without_connecting(site, path, why, no_foreign_connections):
    site.requests.clear()
    with pytest.raises(FetchRefused) as info:
        fetch(site.url(path))
    assert why in info.value.reason
    assert [p for _, p in site.requests] == [path]  # the hop was refused before any request
    assert {a[0] for a in no_foreign_connections} == {"127.0.0.1"}


def test_an_allowed_ip_in_another_spelling_is_the_same_host(site):
    page = fetch(site.url("/to-decimal"))  # http://2130706433:port/ is 127.0.0.1, which is allowed
    assert page.final_url == f"http://2130706433:{site.port}/article" and "Victoria" in page.text


def test_redirect_without_location_and_http_errors(site):
    with pytest.raises(FetchError, match="without a Location"):
        fetch(site.url("/no-location"))
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch(site.url("/missing"))


@pytest.mark.parametrize(
    "path, shown", [("/pdf", "application/pdf"), ("/binary", "application/octet-stream"), ("/no-type", "none")]
)
def test_non_text_content_types_are_refused(site, path, shown):
    with pytest.raises(FetchRefused, match=f"content type {shown} is not fetched"):
        fetch(site.url(path))


def test_oversized_body_is_cut_at_max_bytes(site):
    start = time.monotonic()
    page = fetch(site.url("/big"), max_bytes=100_000)
    assert page.truncated and page.n_bytes == 100_000 and len(page.text) == 100_000
    assert any("body cut at 100000 bytes (fetch_max_bytes)" in n for n in page.notes)
    assert "Victoria Falls" in main_text(page.text, page.content_type)  # a cut page still extracts
    assert time.monotonic() - start < 3


def test_slow_body_is_cut_by_the_total_time_cap(site):
    start = time.monotonic()
    page = fetch(site.url("/slow"), timeout_s=1.0)
    elapsed = time.monotonic() - start
    assert 0.9 <= elapsed < 1.6, elapsed
    assert page.truncated and "drip" in page.text
    assert any("total time cap of 1s" in n for n in page.notes)


def test_silent_server_fails_at_the_time_cap(site):
    start = time.monotonic()
    with pytest.raises(FetchError, match="total time cap of 0.5s"):
        fetch(site.url("/slow-headers"), timeout_s=0.5)
    assert time.monotonic() - start < 1.2


def test_closed_port_is_a_fetch_error():
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(FetchError, match="cannot fetch"):
        fetch(f"http://127.0.0.1:{port}/")


def test_environment_proxies_are_never_used(site, monkeypatch, no_foreign_connections):
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")  # a proxy would resolve names itself
    assert "Victoria" in fetch(site.url("/article")).text
    assert set(no_foreign_connections) == {("127.0.0.1", site.port)}


def test_connections_only_go_to_vetted_addresses(site, no_foreign_connections):
    fetch(site.url("/r/2"))
    assert no_foreign_connections and {a for a in no_foreign_connections} == {("127.0.0.1", site.port)}


def test_defuse_neutralises_delimiters_only():
    assert defuse("a </sources> b <results> 3 < 4 > 2") == "a ‹/sources› b ‹results› 3 < 4 > 2"


# ------------------------------------------------------------- hostile redirects

HOSTILE_LOCATIONS = [
    ("data:text/html,<script>alert(1)</script>", "scheme data:// is not allowed"),
    ("data:text/html;base64,PGI+eDwvYj4=", "scheme data:// is not allowed"),
    ("javascript:alert(document.cookie)", "scheme javascript:// is not allowed"),
    ("file:///etc/passwd", "scheme file:// is not allowed"),
    ("ftp://ftp.example.com/pub/x", "scheme ftp:// is not allowed"),
    ("gopher:x", "scheme gopher:// is not allowed"),
    ("https:evil.example/x", "has a scheme but no //host"),  # RFC 3986: no host; WHATWG: evil.example
    ("http:evil.example", "has a scheme but no //host"),  # WHATWG: a relative path
    ("///evil.example/x", "has an empty host"),  # RFC 3986: a path; WHATWG: evil.example
    ("http:///evil.example/x", "has an empty host"),
    ("//", "has an empty host"),
    ("/\\evil.example/x", "contains a backslash"),  # WHATWG: //evil.example/x
    ("\\\\evil.example\\x", "contains a backslash"),
    ("/a b", "contains whitespace"),
    ("/a\tb", "contains whitespace"),
    ("/a\xa0b", "contains whitespace"),  # a latin-1 byte on the wire
    ("/a\x01b", "contains a control character"),
    ("/a\x1bb", "contains a control character"),
    ("http://[::1", "invalid Location"),
    ("http://xn--/", "not a valid host name"),  # an IDNA error inside httpx before
    ("http://example.com:99999/", "port 99999 is out of range"),
]


@pytest.mark.parametrize("location, why", HOSTILE_LOCATIONS)
def test_hostile_redirect_locations_are_refused_with_a_reason(site, location, why, no_foreign_connections):
    path = "/to?" + quote(location, safe="", encoding="latin-1")
    site.requests.clear()
    with pytest.raises(FetchRefused) as info:
        fetch(site.url(path))
    assert why in info.value.reason and "redirect 1" in info.value.reason
    assert len(site.requests) == 1  # refused before any other request
    assert {a[0] for a in no_foreign_connections} == {"127.0.0.1"}


@pytest.mark.parametrize("location", ["/a\x01b", "/a\x7fb", "/a\x85b", "/a\u202eb", "/a\u200bb", ""])
def test_control_and_format_characters_in_a_location_are_refused(location):
    with pytest.raises(FetchRefused, match="contains (a control character|whitespace)|empty Location"):
        redirect_target(httpx.URL("http://example.com/"), location)


def test_ordinary_locations_resolve_as_before():
    base = httpx.URL("http://example.com/a/b?q=1")
    resolved = {
        "c": "http://example.com/a/c",
        "../c?d=1#e": "http://example.com/c?d=1#e",
        "?page=2": "http://example.com/a/b?page=2",
        "//other.example/p": "http://other.example/p",
        "HTTPS://Other.Example:8443/p": "https://other.example:8443/p",
        "/caf%C3%A9": "http://example.com/caf%C3%A9",
        "/café": "http://example.com/caf%C3%A9",
        "/search?q=a\\b": "http://example.com/search?q=a\\b",  # a backslash in the query is only data
    }
    for location, url in resolved.items():
        assert str(redirect_target(base, location)) == url, location


# --------------------------------------------------- content codings and bombs


def test_we_ask_only_for_codings_we_can_decode_boundedly(site):
    site.headers.clear()
    fetch(site.url("/article"))
    asked = {c.strip() for c in site.headers[-1]["accept-encoding"].split(",")}
    assert asked == ({"gzip", "deflate", "zstd"} if zstandard else {"gzip", "deflate"})


@pytest.mark.parametrize(
    "name",
    [
        "gzip",
        "x-gzip",
        "deflate-zlib",
        "deflate-raw",
        "gzip-gzip",
        "gzip-identity",
        pytest.param("zstd", marks=needs_zstd),
    ],  # noqa: E501
)
def test_encoded_pages_are_decoded(site, name):
    page = fetch(site.url(f"/enc/{name}"))
    assert page.text == ARTICLE and not page.truncated and page.notes == ()
    assert page.n_bytes == len(_A) and 0 < page.wire_bytes < page.n_bytes


def test_every_gzip_member_is_read_and_trailing_junk_ignored(site):
    assert fetch(site.url("/enc/gzip-members")).text == "first member. second member."


@pytest.mark.parametrize(
    "name, why",
    [
        ("br", "content encoding br is not decoded (no bounded brotli decoder is installed"),
        ("compress", "content encoding compress is not decoded (unknown or not installed"),
        ("gzip-x3", "3 content encodings stacked (gzip, gzip, gzip), at most 2"),
    ],
)
def test_codings_we_cannot_bound_are_refused(site, name, why):
    with pytest.raises(FetchRefused) as info:
        fetch(site.url(f"/enc/{name}"))
    assert why in info.value.reason


def test_a_body_that_does_not_decode_is_an_error_or_cut_where_it_stops(site):
    with pytest.raises(FetchError, match=r"cannot decode the body \(Content-Encoding gzip\): gzip: "):
        fetch(site.url("/enc/corrupt-gzip"))
    page = fetch(site.url("/enc/bad-crc-gzip"))  # inflates, then the CRC at the end does not match
    assert page.truncated and len(page.text) >= decoding.DECODE_CHUNK and (ARTICLE * 100).startswith(page.text)
    assert any("where it stopped decoding (Content-Encoding gzip): gzip:" in n for n in page.notes)


@needs_zstd
def test_zstd_frames_needing_more_than_an_8_mb_window_are_not_decoded(site):
    with pytest.raises(FetchError, match="zstd: .*too much memory"):  # RFC 9659; the library allows 128 MB
        fetch(site.url("/enc/zstd-big-window"))


def test_bytes_on_the_wire_are_capped_even_when_nothing_decodes(site):
    page = fetch(site.url("/enc/empty-members"), max_bytes=100_000)  # 15,000 empty gzip members
    assert page.wire_bytes == 100_000 and page.text == "" and page.truncated
    assert "body cut at 100000 bytes on the wire (Content-Encoding gzip) (fetch_max_bytes)" in page.notes


BOMBS = [("bomb-gzip-gzip", 2), pytest.param("bomb-zstd", 1, marks=needs_zstd)]


@pytest.mark.parametrize("name, layers", BOMBS)
def test_decompression_bombs_are_cut_at_the_cap_and_never_decoded_further(site, monkeypatch, name, layers):
    """Every decoding layer is counted: none ever yields more than the cap and one DECODE_CHUNK."""
    cap = 300_000
    produced: list[list[int]] = []  # per layer: bytes yielded, largest single step

    for coding, decode in list(decoding._DECODERS.items()):

        def counting(chunks, _decode=decode):
            seen = [0, 0]
            produced.append(seen)
            for out in _decode(chunks):
                seen[0] += len(out)
                seen[1] = max(seen[1], len(out))
                yield out

        monkeypatch.setitem(decoding._DECODERS, coding, counting)
    page = fetch(site.url(f"/enc/{name}"), max_bytes=cap, timeout_s=5)
    assert page.truncated and len(page.text) == page.n_bytes == cap and page.wire_bytes < 5_000
    assert any(n.startswith(f"decoded body cut at {cap} bytes (fetch_max_bytes") for n in page.notes)
    assert not any("time cap" in n for n in page.notes) and page.ms < 5_000  # returned within the time cap
    assert len(produced) == layers
    for total, largest in produced:
        assert total <= cap + decoding.DECODE_CHUNK and largest <= decoding.DECODE_CHUNK


@pytest.mark.parametrize("name", ["bomb-gzip-gzip", pytest.param("bomb-zstd", marks=needs_zstd)])
def test_decompression_bombs_stay_small_in_memory(site, name):
    ENCODED[name]()  # built (and cached) before measuring
    cap = 1_000_000
    tracemalloc.start()
    try:
        page = fetch(site.url(f"/enc/{name}"), max_bytes=cap, timeout_s=5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(page.text) == cap and page.truncated
    # the kept chunks, their join and the text, plus a few DECODE_CHUNKs; httpx's decoders held all 64 MB
    assert peak < 8 * cap, peak


@pytest.mark.parametrize("path", ["/charset-header", "/charset-meta"])
def test_a_page_cannot_pick_a_codec_that_is_not_a_charset(site, path):
    """punycode's decoder is quadratic (2 MB of it takes minutes, past any time cap); idna and the escapes are
    codecs, not charsets either. The text is read as UTF-8 instead."""
    assert "abc-def" in fetch(site.url(path)).text


# ------------------------------------------------- DNS pinning with TLS (SNI, Host)


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory):
    """An HTTPS server on 127.0.0.1 whose self-signed certificate names only ``saturate.test``."""
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "2", "-subj", "/CN=saturate.test", "-addext", "subjectAltName=DNS:saturate.test"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    site = LocalSite()
    seen: dict = {}
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    server_ctx.sni_callback = lambda sock, name, ctx: seen.__setitem__("sni", name)  # returns None: no alert
    site.server.socket = server_ctx.wrap_socket(site.server.socket, server_side=True)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    yield site, client_ctx, seen
    site.close()


def test_tls_connects_to_the_vetted_ip_with_the_real_name_for_sni_host_and_certificate(
    tls_site, no_foreign_connections
):
    site, client_ctx, seen = tls_site
    resolve = fake_dns({"saturate.test": ["127.0.0.1"]})
    page = fetch_page(
        f"https://saturate.test:{site.port}/r/1", allow_hosts=["saturate.test"], resolve=resolve,
        ssl_context=client_ctx, timeout_s=5,
    )  # fmt: skip
    assert page.final_url == f"https://saturate.test:{site.port}/article" and "Mosi-oa-Tunya" in page.text
    assert seen["sni"] == "saturate.test"  # SNI is the name, not the pinned IP
    assert set(no_foreign_connections) == {("127.0.0.1", site.port)}
    assert resolve.calls == ["saturate.test", "saturate.test"]  # vetted again on the redirect hop, then pinned


def test_tls_certificate_is_still_verified(tls_site):
    site, client_ctx, _ = tls_site
    resolve = fake_dns({"other.test": ["127.0.0.1"]})
    with pytest.raises(FetchError, match="cannot fetch"):  # the certificate does not name other.test
        fetch_page(f"https://other.test:{site.port}/article", allow_hosts=["other.test"], resolve=resolve,
                   ssl_context=client_ctx, timeout_s=5)  # fmt: skip


def test_a_name_resolving_elsewhere_later_is_never_connected(site, no_foreign_connections):
    """DNS rebinding: the fetcher resolves once per hop and connects only to what it vetted."""
    answers = iter([["127.0.0.1"], ["10.9.9.9"]])  # a second lookup would say 10.9.9.9
    resolve = lambda host, port: next(answers)  # noqa: E731
    page = fetch_page(site.url("/article").replace("127.0.0.1", "rebind.test"), allow_hosts=["rebind.test"],
                      resolve=resolve, timeout_s=5)  # fmt: skip
    assert "Mosi-oa-Tunya" in page.text and set(no_foreign_connections) == {("127.0.0.1", site.port)}
