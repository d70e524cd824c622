// The login page: the token of the URL into the form.
"use strict";
const token = new URLSearchParams(location.search).get("token") || "";
document.getElementById("login-token").value = token;
