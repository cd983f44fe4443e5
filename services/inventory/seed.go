package inventory

import "time"

// Catalogue returns the seed catalogue (see the package doc), stamped with
// now. Run loads it into an empty database only.
func Catalogue(now time.Time) []Item {
	usd := func(minor int64) Money { return Money{Minor: minor, Currency: "USD"} }
	items := []Item{
		{SKU: "keyboard-001", Name: "Mechanical Keyboard", Price: usd(4999), Stock: Stock{Available: 100}},
		{SKU: "mouse-001", Name: "Wireless Mouse", Price: usd(2499), Stock: Stock{Available: 200}},
		{SKU: "monitor-001", Name: "27-inch 4K Monitor", Price: usd(32900), Stock: Stock{Available: 25}},
		{SKU: "headset-001", Name: "Noise-Cancelling Headset", Price: usd(8950), Stock: Stock{Available: 50}},
		{SKU: "webcam-001", Name: "1080p Webcam", Price: usd(3995), Stock: Stock{Available: 75}},
		{SKU: "usb-hub-001", Name: "7-Port USB Hub", Price: usd(1999), Stock: Stock{Available: 150}},
	}
	for i := range items {
		items[i].UpdateTime = now
	}
	return items
}
