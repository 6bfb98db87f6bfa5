"""Account (API tokens) and Users pages."""

from sqlalchemy import select

from redolab.auth.models import ApiToken, Role, User

HTMX = {"HX-Request": "true"}


def test_token_is_shown_once_then_listed_by_prefix(browser_client, session):
    created = browser_client.post("/account/tokens", data={"name": "nightly"}, headers=HTMX)
    assert created.status_code == 200
    token = created.text.split("<pre>")[1].split("</pre>")[0].strip()
    assert token.startswith("rl_")
    page = browser_client.get("/account")
    assert token not in page.text and token[:10] in page.text
    row = session.scalars(select(ApiToken)).one()
    revoked = browser_client.delete(f"/account/tokens/{row.id}", headers=HTMX)
    assert "revoked" in revoked.text


def test_token_needs_a_name(browser_client):
    response = browser_client.post("/account/tokens", data={"name": ""}, headers=HTMX)
    assert response.status_code == 422 and "Give the token a name" in response.text


def test_admin_adds_user_and_changes_role(browser_client, session):
    added = browser_client.post(
        "/users", data={"username": "olga", "password": "plum kettle orbit", "role": "viewer"}, headers=HTMX
    )
    assert added.status_code == 200 and "Added olga as viewer." in added.text
    olga = session.scalars(select(User).where(User.username == "olga")).one()
    assert olga.role is Role.viewer
    changed = browser_client.post(f"/users/{olga.id}/role", data={"role": "operator"}, headers=HTMX)
    assert 'id="users-saved"' in changed.text and "Saved: olga is now operator." in changed.text  # said, not silent
    session.refresh(olga)
    assert olga.role is Role.operator
    short = browser_client.post("/users", data={"username": "p", "password": "short", "role": "viewer"}, headers=HTMX)
    assert short.status_code == 422 and "at least 12 characters" in short.text


def test_admin_cannot_demote_themselves(browser_client, session, user):
    browser_client.post(f"/users/{user.id}/role", data={"role": "viewer"}, headers=HTMX)
    session.refresh(user)
    assert user.role is Role.admin
