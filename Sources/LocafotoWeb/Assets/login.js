// Replaces /login?code=… in the address bar and in the history with the app itself.
location.replace("/");
