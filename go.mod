module github.com/tupled/tupled

go 1.26
