import pytest

from redolab.core.validators import check_host_address, check_interface_name, check_posix_user


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("db1.example.com", "db1.example.com"),
        ("db1-stby", "db1-stby"),
        ("10.0.0.5", "10.0.0.5"),
        ("::1", "::1"),
        ("[fe80::1]", "fe80::1"),
        (" 127.0.0.1 ", "127.0.0.1"),
    ],
)
def test_host_addresses_accepted(value, expected):
    assert check_host_address(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "-oProxyCommand=touch /tmp/x",  # would be read by ssh as an option
        "db1;reboot",
        "$(id)",
        "db1 db2",
        "a`id`",
        "db_1.example.com",
        "999.1.1.1",
        "x" * 64,
        "",
    ],
)
def test_host_addresses_refused(value):
    with pytest.raises(ValueError, match=r"host name|IP|Enter a host"):
        check_host_address(value)


@pytest.mark.parametrize("value", ["oracle", "db2inst1", "_svc", "grid-adm", "machine$"])
def test_posix_users_accepted(value):
    assert check_posix_user(value) == value


@pytest.mark.parametrize("value", ["Oracle", "root;id", "-l", "a b", "1abc", "x" * 33, ""])
def test_posix_users_refused(value):
    with pytest.raises(ValueError, match="not a valid user name"):
        check_posix_user(value)


@pytest.mark.parametrize("value", ["eth0", "bond0.120", "ens3f1", "eth0:1", "ib_0"])
def test_interfaces_accepted(value):
    assert check_interface_name(value) == value


@pytest.mark.parametrize("value", ["-eth0", "eth0;ls", "a/b", "x" * 16, "eth 0", ""])
def test_interfaces_refused(value):
    with pytest.raises(ValueError, match="not a network interface name"):
        check_interface_name(value)
