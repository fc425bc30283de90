package main

import (
	"errors"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"
)

// Product is GORM's quickstart model.
type Product struct {
	gorm.Model
	Code  string
	Price uint
}

// runGorm is GORM's quickstart, plus a SKIP LOCKED queue pop.
func runGorm(url string) {
	var db *gorm.DB
	if !step("open", func() error {
		var err error
		db, err = gorm.Open(postgres.Open(url), &gorm.Config{
			Logger: logger.Default.LogMode(logger.Silent),
			// The table name is unique to this process (see table).
			NamingStrategy: schema.NamingStrategy{TablePrefix: table("go_gorm") + "_"},
		})
		return err
	}) {
		return
	}
	step("automigrate", func() error { return db.AutoMigrate(&Product{}) })
	step("automigrate_again", func() error { return db.AutoMigrate(&Product{}) })
	step("create", func() error {
		if err := db.Create(&Product{Code: "D42", Price: 100}).Error; err != nil {
			return err
		}
		return db.Create(&Product{Code: "E7", Price: 7}).Error
	})
	var p Product
	step("first", func() error {
		if err := db.First(&p, "code = ?", "D42").Error; err != nil {
			return err
		}
		return want("price", p.Price, 100)
	})
	step("save", func() error {
		p.Price = 200
		if err := db.Save(&p).Error; err != nil {
			return err
		}
		var q Product
		if err := db.First(&q, p.ID).Error; err != nil {
			return err
		}
		return want("price", q.Price, 200)
	})
	step("update_column", func() error {
		return db.Model(&p).Update("Code", "F42").Error
	})
	step("count", func() error {
		var n int64
		if err := db.Model(&Product{}).Count(&n).Error; err != nil {
			return err
		}
		return want("count", n, 2)
	})
	step("skip_locked", func() error {
		return db.Transaction(func(tx *gorm.DB) error {
			var first Product
			if err := tx.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"}).
				Order("id").First(&first).Error; err != nil {
				return err
			}
			// A second session skips the row the first has locked.
			return db.Transaction(func(tx2 *gorm.DB) error {
				var next Product
				if err := tx2.Clauses(clause.Locking{Strength: "UPDATE", Options: "SKIP LOCKED"}).
					Order("id").First(&next).Error; err != nil {
					return err
				}
				if next.ID == first.ID {
					return errors.New("the locked row was not skipped")
				}
				return nil
			})
		})
	})
	step("delete", func() error {
		if err := db.Delete(&p, p.ID).Error; err != nil {
			return err
		}
		var n int64
		if err := db.Model(&Product{}).Count(&n).Error; err != nil {
			return err
		}
		return want("count after soft delete", n, 1)
	})
	step("drop_table", func() error { return db.Migrator().DropTable(&Product{}) })
}
