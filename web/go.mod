module kassa.dev/web

go 1.26.0
