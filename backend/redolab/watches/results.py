"""A delivery attempt's result in fixed words, as the watch page shows it to everyone who may read it:
"HTTP 200", "SMTP 250", "timed out after 5 s", "connection refused", "TLS error", "not an HTTP answer",
"host name not found", "refused: ..." (watches.targets). Never anything the receiver sent (an SSH banner,
an HTML page, a server's reply text), nor the URL."""

from __future__ import annotations

import errno
import http.client
import re
import smtplib
import socket
import ssl
import urllib.error

from redolab.core.units import format_duration
from redolab.watches.targets import TargetRefused

RESULT_LENGTH = 300  # Notification.last_result
# What results were before they were fixed words: an exception's class name and the text it carried,
# which could be the receiver's own bytes ("BadStatusLine: SSH-2.0-OpenSSH_9.6").
_FORMER_ERROR = re.compile(r"([A-Z][A-Za-z0-9]{0,80}): ")


def shown_result(stored: str) -> str:
    """A notification's result as pages show it: one stored before results were fixed words keeps its
    error's name only."""
    if former := _FORMER_ERROR.match(stored):
        return f"{former[1]} (the receiver's answer is not shown)"
    return stored


def error_text(error: BaseException, timeout: float) -> str:
    """What went wrong in fixed words: a status code, "timed out", "connection refused", "TLS error"...
    Never anything the receiver sent (an SSH banner, an HTML page, a server's reply text) nor the URL:
    the result is shown on the watch page to everyone who may read it."""
    if isinstance(error, urllib.error.HTTPError):
        if 300 <= error.code < 400:
            return f"redirect not followed (HTTP {error.code})"
        return f"HTTP {error.code}"
    if isinstance(error, urllib.error.URLError):
        error = error.reason if isinstance(error.reason, BaseException) else error
    if isinstance(error, smtplib.SMTPException):
        return _smtp_error_text(error)
    return _network_error_text(error, timeout)


def _smtp_error_text(error: smtplib.SMTPException) -> str:
    if isinstance(error, smtplib.SMTPNotSupportedError):
        return "the SMTP server offers no STARTTLS (REDOLAB_SMTP_STARTTLS is on)"
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        codes = sorted({code for code, _ in error.recipients.values() if isinstance(code, int)})
        return f"SMTP {', '.join(map(str, codes))}: recipient refused"
    if isinstance(error, smtplib.SMTPServerDisconnected):
        return "the SMTP server closed the connection"
    if isinstance(error, smtplib.SMTPResponseException):
        if not 200 <= error.smtp_code <= 599:  # smtplib's -1: the greeting was no "220 ..." line
            return "not an SMTP answer"
        if isinstance(error, smtplib.SMTPAuthenticationError):
            return f"SMTP {error.smtp_code}: login refused (REDOLAB_SMTP_USER, REDOLAB_SMTP_PASSWORD)"
        return f"SMTP {error.smtp_code}"
    return f"not sent: {type(error).__name__}"


def _network_error_text(error: BaseException, timeout: float) -> str:
    if isinstance(error, TargetRefused):
        return str(error)  # redolab's own words (watches.targets)
    if isinstance(error, TimeoutError):
        return f"timed out after {format_duration(timeout)}"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the receiver closed the connection without an answer"
    if isinstance(error, http.client.HTTPException):  # BadStatusLine, LineTooLong: the peer's line is in it
        return "not an HTTP answer"
    if isinstance(error, ConnectionError):
        return "connection reset"
    if isinstance(error, ssl.SSLCertVerificationError):
        # OpenSSL's fixed text for its verify code (expired, self-signed, hostname mismatch), not the peer's
        return f"TLS certificate not trusted: {error.verify_message}"[:RESULT_LENGTH]
    if isinstance(error, ssl.SSLError):
        return "TLS error"
    if isinstance(error, socket.gaierror):
        return "host name not found"
    if isinstance(error, OSError):
        return f"network error ({errno.errorcode.get(error.errno or 0, 'unknown')})"
    return f"not sent: {type(error).__name__}"
